"""Run a command and sample the memory (RSS) of its whole process tree every
0.2 s; write "PEAK_MIB CPU_S RC WALL_S" to OUT. With --until-ended CONF, stop
the command (SIGKILL) once CONF (a run.conf) records the workload's wall
time: what follows is maya's post-processing, measured apart.

    python3 sample_tree.py OUT [--until-ended CONF] CMD [ARGS...]
"""
import os
import resource
import subprocess
import sys
import time


def tree_rss_kib(root):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                st = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()
                kids.setdefault(int(st[1]), []).append(int(d))
            except OSError:
                pass
    todo, rss = [root], 0
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            rss += sum(int(l.split()[1]) for l in open("/proc/%d/status" % pid) if l.startswith("VmRSS:"))
        except OSError:
            pass
    return rss


def main():
    out, args = sys.argv[1], sys.argv[2:]
    conf = None
    if args[:1] == ["--until-ended"]:
        conf, args = args[1], args[2:]
    t0 = time.time()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(out + ".err", "w"))
    peak = 0
    while p.poll() is None:
        peak = max(peak, tree_rss_kib(p.pid))
        if conf and os.path.exists(conf) and "wall_s=" in open(conf).read():
            p.kill()  # the post-processing has begun: the workload is done
            p.wait()
            break
        time.sleep(0.2)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc = 0 if conf else p.returncode
    open(out, "w").write("%d %.3f %d %.1f\n" % (peak // 1024, ru.ru_utime + ru.ru_stime, rc, time.time() - t0))


main()
