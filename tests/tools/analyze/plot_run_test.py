#!/usr/bin/python3
"""tools/plot_run.py, the drawing behind swemu-analyze --plot (ctest: tools_plot_run).

  plot_run_test.py --tmp DIR [--gen SWEMU_GEN --analyze SWEMU_ANALYZE]

On CSVs written here (a 10-ms run with queue telemetry, a run of one 50-us bin without any,
a run whose telemetry is all zero): the one-bin run is drawn (a segment over its bin and a
point) on 0..50 us, each column has its own unit and a range from 0, and the queue panels say
"no queue telemetry in this run" and "no queue built up" where each applies. Then, with the
binaries, the same through swemu-analyze --plot on pcaps from swemu-gen (12 us and 6 ms, so a
50-us bin) as an SVG, whose words are text. Exit 0 when all hold, 1 with the reasons otherwise.
"""
import argparse
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import plot_run  # noqa: E402

PROBLEMS = []
NO_TELEMETRY = "no queue telemetry in this run"
NO_QUEUE = "no queue built up"
TELEMETRY_HEADER = ("time_ns,switch,port,queue,depth_packets,depth_bytes,marked_total,"
                    "dropped_total")


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)


def write_csvs(d):
    os.makedirs(d, exist_ok=True)
    rates = ["run,port,time_s,frames,bytes,throughput_Mbps,ce_frames"]
    rates += [f"long,1,{i * 50e-6:.9f},10,15000,2400.0,0" for i in range(200)]
    rates += ["short,1,0.000000000,8,1216,194.56,0"]
    rates += [f"zero,2,{i * 50e-6:.9f},2,3000,480.0,0" for i in range(40)]
    queues = ["run,switch,port,queue,time_s,depth_packets,depth_bytes,marked_packets,"
              "dropped_packets"]
    queues += [f"long,leaf,2,0,{i * 50e-6:.9f},{i % 40},{(i % 40) * 1500},0,0"
               for i in range(200)]
    queues += [f"zero,leaf,2,0,{i * 50e-6:.9f},0,0,0,0" for i in range(40)]
    for name, lines in (("throughput.csv", rates), ("queue.csv", queues)):
        with open(os.path.join(d, name), "w") as f:
            f.write("\n".join(lines) + "\n")


def notes(ax):
    return [t.get_text() for t in ax.texts]


def check_drawing(tmp):
    d = os.path.join(tmp, "csv")
    write_csvs(d)
    throughput = plot_run.series_by_run(plot_run.read_rows(os.path.join(d, "throughput.csv")),
                                        lambda r: r["port"], "throughput_Mbps")
    depth = plot_run.series_by_run(plot_run.read_rows(os.path.join(d, "queue.csv")),
                                   lambda r: r["switch"], "depth_packets")
    expect(abs(plot_run.bin_seconds(throughput, 0) - 50e-6) < 1e-12,
           "the bin is not read off the rows' spacing")
    fig = plot_run.draw(["long", "short", "zero"], throughput, depth, 50e-6, True)
    axes = fig.axes  # row by row: long, short, zero throughput, then their queues
    long_x, short_x, zero_x = (axes[i].get_xlim() for i in range(3))
    expect(long_x == (0.0, 10.0) and axes[3].get_xlabel().endswith("(ms)"),
           f"10-ms run: x {long_x}, label {axes[3].get_xlabel()!r}")
    expect(short_x == (0.0, 50.0) and axes[4].get_xlabel().endswith("(us)"),
           f"one-bin run: x {short_x} (want 0..50 us), label {axes[4].get_xlabel()!r}")
    expect(zero_x == (0.0, 2000.0), f"2-ms run: x {zero_x} (want 0..2000 us)")
    segment = [list(line.get_xdata()) for line in axes[1].lines]
    expect([0.0, 50.0] in segment, f"the one-bin run's bin is not drawn over 0..50: {segment}")
    expect(any(line.get_marker() == "o" for line in axes[1].lines),
           "the one-bin run is not marked with a point")
    expect(notes(axes[4]) == [NO_TELEMETRY], f"run without telemetry: {notes(axes[4])}")
    expect(notes(axes[5]) == [NO_QUEUE], f"run with all-zero telemetry: {notes(axes[5])}")
    expect(notes(axes[3]) == [], f"run with a queue: {notes(axes[3])}")
    status = plot_run.main(["plot_run.py", d, os.path.join(tmp, "direct.png"), "png", "x"])
    expect(status == 2, f"a BIN_NS that is not a number: exit {status}")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    expect(p.returncode == 0, f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def check_analyze(tmp, gen, analyze):
    """swemu-analyze --plot: the short run's column reads 0..50 us, and the notes are there."""
    zero = os.path.join(tmp, "zero")
    os.makedirs(zero, exist_ok=True)
    short = os.path.join(tmp, "short.pcap")
    run([gen, "-o", short, "-n", "10", "--size", "128", "--rate", "1G"])
    run([gen, "-o", os.path.join(zero, "h0.pcap"), "-n", "5000", "--size", "128", "--rate", "1G"])
    with open(os.path.join(zero, "telemetry.csv"), "w") as f:  # the queue never held a packet
        f.write(TELEMETRY_HEADER + "\n")
        for k in range(60):
            f.write(f"{1_000_000_000 + k * 100_000},leaf,1,0,0,0,0,0\n")
    svg = os.path.join(tmp, "runs.svg")
    run([analyze, zero, short, "--plot", svg])
    text = open(svg).read() if os.path.exists(svg) else ""
    expect(NO_TELEMETRY in text, "swemu-analyze --plot: no note on the run without telemetry")
    expect(NO_QUEUE in text, "swemu-analyze --plot: no note on the all-zero telemetry")
    expect(">50<" in text or "> 50<" in text, "the short run's axis does not reach 50 us")
    expect("\u22120.04" not in text, "the short run's axis still reads -0.04..0.04")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--gen")
    ap.add_argument("--analyze")
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    check_drawing(a.tmp)
    if a.gen and a.analyze:
        check_analyze(a.tmp, a.gen, a.analyze)
    for p in PROBLEMS:
        print(f"plot_run_test: {p}", file=sys.stderr)
    print("plot_run_test: " + ("FAILED" if PROBLEMS else "all checks hold"))
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
