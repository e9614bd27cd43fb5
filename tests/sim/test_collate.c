/* The collator refuses jobs that would hang or compute garbage on GPUs, with
 * a message naming the ranks, the op and its sequence number; a consistent
 * job becomes one job trace that `maya trace dump` prints.
 */
#include "maya/trace_dump.h"
#include "sim/simtest.h"

/* Two ranks, each: allreduce #0, broadcast #1 (root 0), send/recv pair. */
static char r0[1024], r1[1024];

static void job(const char *ar1, const char *bc1, const char *p2p1, const char *extra0)
{
    snprintf(r0, sizeof r0,
             "header rank=0 world_size=2\n"
             "stream id=1 dev=0\n"
             "comm id=0x5 rank=0 nranks=2 gpu=0\n"
             "coll stream=1 op=allreduce comm=0x5 rank=0 nranks=2 cseq=0 count=1024 dtype=7\n"
             "coll stream=1 op=broadcast comm=0x5 rank=0 nranks=2 cseq=1 count=64 dtype=7 peer=0\n"
             "coll stream=1 op=send comm=0x5 rank=0 nranks=2 peer=1 cseq=0 count=256 dtype=9\n"
             "%s", extra0);
    snprintf(r1, sizeof r1,
             "header rank=1 world_size=2 local_rank=1\n"
             "stream id=1 dev=0\n"
             "comm id=0x5 rank=1 nranks=2 gpu=1\n"
             "%s%s%s", ar1, bc1, p2p1);
}

#define AR_OK "coll stream=1 op=allreduce comm=0x5 rank=1 nranks=2 cseq=0 count=1024 dtype=7\n"
#define BC_OK "coll stream=1 op=broadcast comm=0x5 rank=1 nranks=2 cseq=1 count=64 dtype=7 peer=0\n"
#define RECV_OK "coll stream=1 op=recv comm=0x5 rank=1 nranks=2 peer=0 cseq=0 count=256 dtype=9\n"

static void refused(const char *name, const char *const *want)
{
    const char *ranks[] = { r0, r1 };
    const char *path = make_job(name, ranks, 2);
    EXPECT(path == NULL, "%s: the collator accepted an inconsistent job", name);
    for (const char *const *w = want; *w; w++)
        EXPECT(strstr(maya_last_error(), *w), "%s: expected \"%s\" in the message: %s", name, *w,
               maya_last_error());
}

int main(void)
{
    /* consistent: collates, and the job trace holds both ranks */
    job(AR_OK, BC_OK, RECV_OK, "");
    const char *ranks[] = { r0, r1 };
    const char *path = make_job("ok", ranks, 2);
    EXPECT(path != NULL, "a consistent job collates: %s", maya_last_error());
    if (path) {
        char *buf = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&buf, &len);
        EXPECT(maya_trace_dump(path, fp, 0) == 0, "dump the job trace");
        fclose(fp);
        EXPECT(strstr(buf, "header       version=1 kind=job"), "job header:\n%s", buf);
        EXPECT(strstr(buf, "job          world_size=2 ranks=2 nodes=1 gpus_per_node=8 gpu=H100-SXM comms=1 "
                           "collectives=2 p2p_pairs=1"), "job record:\n%s", buf);
        EXPECT(strstr(buf, "job_comm     id=0x0000000000000005 nranks=2 nodes=1 max_per_node=2 collectives=2 "
                           "members=0@gpu0,1@gpu1"), "job_comm record:\n%s", buf);
        EXPECT(strstr(buf, "rank_begin   rank=0 ") && strstr(buf, "rank_begin   rank=1 "), "rank sections");
        EXPECT(strstr(buf, "rank_end     records="), "rank end");
        EXPECT(strstr(buf, "\nend          records="), "end record");
        free(buf);
    }

    job("coll stream=1 op=allreduce comm=0x5 rank=1 nranks=2 cseq=0 count=512 dtype=7\n", BC_OK, RECV_OK, "");
    refused("count", (const char *const[]){ "collective #0 on communicator 0x5 does not match",
                                            "rank 0 (comm rank 0) calls allreduce of 1024 float32",
                                            "rank 1 (comm rank 1) calls allreduce of 512 float32", NULL });

    job("coll stream=1 op=allgather comm=0x5 rank=1 nranks=2 cseq=0 count=1024 dtype=7\n", BC_OK, RECV_OK, "");
    refused("op", (const char *const[]){ "collective #0", "calls allgather of 1024", NULL });

    job("coll stream=1 op=allreduce comm=0x5 rank=1 nranks=2 cseq=0 count=1024 dtype=9\n", BC_OK, RECV_OK, "");
    refused("dtype", (const char *const[]){ "calls allreduce of 1024 bfloat16", NULL });

    job(AR_OK, "coll stream=1 op=broadcast comm=0x5 rank=1 nranks=2 cseq=1 count=64 dtype=7 peer=1\n", RECV_OK, "");
    refused("root", (const char *const[]){ "collective #1", "broadcast of 64 float32 (root 0",
                                           "broadcast of 64 float32 (root 1", NULL });

    job(AR_OK, "", RECV_OK, "");
    refused("missing", (const char *const[]){ "broadcast #1 on communicator 0x5 (2 members, 64 float32) is "
                                              "called by 1 of them", "missing: rank 1 (comm rank 1, 1 collectives)",
                                              "would hang", NULL });

    job(AR_OK, BC_OK, "", "");
    refused("unmatched send", (const char *const[]){ "rank 0 (comm rank 0) sends #0 (256 bfloat16) to comm rank 1",
                                                     "never receives it", NULL });

    job(AR_OK, BC_OK, RECV_OK "coll stream=1 op=recv comm=0x5 rank=1 nranks=2 peer=0 cseq=1 count=8\n", "");
    refused("unmatched recv", (const char *const[]){ "rank 1 (comm rank 1) waits to receive #1 (8 float32) from "
                                                     "comm rank 0", "never sends it", NULL });

    job(AR_OK, BC_OK, "coll stream=1 op=recv comm=0x5 rank=1 nranks=2 peer=0 cseq=0 count=128 dtype=9\n", "");
    refused("p2p size", (const char *const[]){ "send #0 from comm rank 0 to 1 on communicator 0x5 does not match",
                                               "rank 0 sends 256 bfloat16, rank 1 receives 128 bfloat16", NULL });

    /* a rank without a trace */
    job(AR_OK, BC_OK, RECV_OK, "");
    const char *one[] = { r0 };
    EXPECT(make_job("lonely", one, 1) == NULL, "a job missing rank 1 is refused");
    EXPECT(strstr(maya_last_error(), "rank 1 left no trace") && strstr(maya_last_error(), "WORLD_SIZE=2"),
           "missing rank: %s", maya_last_error());
    return finish("collate");
}
