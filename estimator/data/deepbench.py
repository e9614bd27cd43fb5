"""DeepBench's V100 training results as maya's tables: gemm_simt.csv (fp32
GEMMs, which run on CUDA cores: what the analytical model's SIMT constants
are fitted on), gemm_deepbench.csv (fp16 GEMMs, on tensor cores: what the
V100's learned GEMM model is trained on) and conv.csv (convolutions, fp32
and fp16, forward and both backward passes: held out, judged by
conv_check.py). The source is
results/train/DeepBench_NV_V100.xlsx of github.com/baidu-research/DeepBench
(DGX-1, CUDA 10.1.243, cuDNN 7.6.2); the workbook is read with the
standard library (an .xlsx is a zip of XML sheets).

    python3 estimator/data/deepbench.py DeepBench_NV_V100.xlsx [OUT_DIR]
"""
import os
import re
import sys
import zipfile


def sheets(path):
    z = zipfile.ZipFile(path)
    strings = [re.sub(r"<[^>]+>", "", s) for s in
               re.findall(r"<si>(.*?)</si>", z.read("xl/sharedStrings.xml").decode(), re.S)]
    for i in (1, 2):
        rows = []
        for r in re.findall(r"<row [^>]*>(.*?)</row>", z.read("xl/worksheets/sheet%d.xml" % i).decode(), re.S):
            cells = {}
            for col, attrs, inner in re.findall(r'<c r="([A-Z]+)\d+"([^>]*?)(?:/>|>(.*?)</c>)', r, re.S):
                v = re.search(r"<v>(.*?)</v>", inner or "")
                v = v.group(1) if v else ""
                cells[col] = strings[int(v)] if 't="s"' in attrs and v else v
            rows.append(cells)
        yield ("fp32" if i == 1 else "fp16"), rows


def section(rows, title):
    """The data rows under a section whose column A starts with title."""
    on = False
    for c in rows:
        a = c.get("A", "")
        if a.startswith(title):
            on = True
            continue
        if on and a:
            return
        if on and c.get("B"):
            yield c


def number(s):
    try:
        return float(s)
    except ValueError:
        return None


def main():
    src, out = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    gemm = ["gpu,source,group,m,n,k,prec,time_us"]
    gemm_tc = list(gemm)
    conv = ["gpu,source,group,prec,n,c,h,w,k,r,s,pad,stride,pass,time_us"]
    for prec, rows in sheets(src):
        for c in section(rows, "Dense Matrix"):
            m, n, k, ms = (number(c.get(x, "")) for x in "CDEI")
            if None not in (m, n, k, ms):
                (gemm if prec == "fp32" else gemm_tc).append("V100-SXM2-32GB,deepbench,%s-%s%s,%d,%d,%d,%s,%.6g" % (
                    c["B"].replace(" ", "_"), c.get("F", "N"), c.get("G", "N"), m, n, k, prec, ms * 1e3))
        for c in section(rows, "Convolution"):
            w, h, ch, n, k, s, r, pw, ph, sw, sh = (number(c.get(x, "")) for x in "CDEFGHIJKLM")
            if None in (w, h, ch, n, k, s, r, pw, ph, sw, sh) or pw != ph or sw != sh:
                continue
            for col, p in (("N", "fwd"), ("O", "bwd_data"), ("P", "bwd_filter")):
                ms = number(c.get(col, ""))
                if ms is not None:
                    conv.append("V100-SXM2-32GB,deepbench,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%.6g" % (
                        c["B"].replace(" ", "_"), prec, n, ch, h, w, k, r, s, pw, sw, p, ms * 1e3))
    for name, lines in (("gemm_simt.csv", gemm), ("gemm_deepbench.csv", gemm_tc), ("conv.csv", conv)):
        with open(os.path.join(out, name), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("%s: %d rows" % (name, len(lines) - 1))


if __name__ == "__main__":
    main()
