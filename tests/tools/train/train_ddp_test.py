#!/usr/bin/python3
"""tools/train/train_ddp.py as CI runs it (ctest: tools_train_ddp_*).

  train_ddp_test.py --build BUILD --tmp DIR CASE

CASE digits: 2 ranks, one epoch of the digits CNN, swemu through the DDP hook over the switch
(dpdk), then Gloo: exit 0 with --check, swemu's curve bit-equal to ATP's arithmetic without a
network and within train_digits' rules of Gloo's, most gradient elements summed in the switch.
CASE resnet: 2 ranks, one epoch of the small ResNet, swemu as the torch.distributed backend
("swemu") over loopback UDP (no switch), then Gloo: exit 0 with --check.
CASE netns (root; otherwise SKIPPED): the ranks as separate hosts. `swemu-atp publish` writes
the switch and the job, swemu runs the switch in real time on net_af_packet (--backend netns),
each of 2 ranks and the PS (`swemu-atp ps`) in a network namespace of its own: the ranks run
train_ddp.py --rank R --init tcp://RANK0:PORT --job FILE (digits, one epoch, through the hook,
rank 0 over kernel UDP, rank 1 on a DPDK port, --port net_af_packet0,iface=eth0; then Gloo over
TCP through the same switch), rank 0 with --check: exit 0, bit-equal to ATP's arithmetic,
within the rules of Gloo, the parameters identical on both ranks, most elements summed in the
switch (the PS's line), within 60 s. A Worker of the job outside the namespaces is refused in
one line.
CASE torchrun (root; otherwise SKIPPED): the same network, each rank started by torchrun
(`python3 -m torch.distributed.run --nnodes 2 --nproc_per_node 1 --node_rank R --master_addr
RANK0`, as on two servers) with SWEMU_JOB and no --rank/--init (RANK, WORLD_SIZE, env://), both
over kernel UDP: rank 0's --check holds, the parameters identical, most elements in the switch.
CASE options: bad options end with one line and exit 2 before anything is written.
Exit 0 when the case holds, 1 with the reasons otherwise.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO, "tools", "train", "train_ddp.py")
PORT = "net_af_packet0,iface=eth0"  # netns: rank 1's DPDK port (its namespace's veth)
PROBLEMS = []


def expect(cond, what):
    if not cond:
        PROBLEMS.append(what)


def run(args, tmp, name, timeout=600, env=None):
    """From `tmp`, with --out-dir relative to it, as the README's default out/train_ddp is."""
    cmd = ["/usr/bin/python3", SCRIPT, "--out-dir", name] + args
    return (subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp),
            os.path.join(tmp, name))


def rows(out_dir):
    with open(os.path.join(out_dir, "ddp.csv")) as f:
        return list(csv.DictReader(f))


def case_digits(build, tmp):
    p, out = run(["--model", "digits", "--workers", "2", "--epochs", "1", "--check",
                  "--accuracy-floor", "0.3", "--build", build], tmp, "digits")
    expect(p.returncode == 0, f"digits: exit {p.returncode}: {p.stdout}{p.stderr}")
    expect("check switch: equal to ATP's arithmetic" in p.stdout, f"not bit-equal: {p.stdout}")
    expect("check switch: largest loss difference to gloo" in p.stdout, "no comparison to Gloo")
    share = [l for l in p.stdout.splitlines() if l.startswith("summary swemu:")]
    expect(share and "summed in the switch" in share[0] and
           float(share[0].split("%, ")[-1].split("%")[0]) > 50, f"switch share: {share}")
    expect({r["mode"] for r in rows(out)} == {"swemu", "gloo"}, "modes in the CSV")


def case_resnet(build, tmp):
    p, out = run(["--model", "resnet", "--workers", "2", "--epochs", "1", "--via", "backend",
                  "--transport", "udp", "--check", "--build", build], tmp, "resnet")
    expect(p.returncode == 0, f"resnet: exit {p.returncode}: {p.stdout}{p.stderr}")
    expect("check ps: largest loss difference to gloo" in p.stdout, f"no check: {p.stdout}")
    expect("swemu via backend over udp" in p.stdout, "not the backend")
    r = rows(out)
    expect(len(r) == 2 and all(float(x["seconds_per_iteration"]) > 0 for x in r), f"rows {r}")


def netns_run(build, d, name, net, rank_command):
    """In directory d, the ranks as separate hosts: NAMEw0 and NAMEw1 (switch ports 0 and 1) and the PS NAMEps
    (port 2) on 10.9.NET.0/24, each in a namespace on swemu-atp publish's switch NAMEtor, run in
    real time on net_af_packet (swemu --backend netns). rank_command(job, rank): the rank's run
    line. Returns swemu's process, its seconds and the logs ("ps", "w0", "w1"), or SKIPs."""
    if os.geteuid() != 0:
        print(f"{os.path.basename(d)}: SKIPPED: needs root (network namespaces)")
        sys.exit(0)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    hosts = [(f"{name}w0", f"10.9.{net}.1", f"02:00:00:00:{net:02x}:01", "worker"),
             (f"{name}w1", f"10.9.{net}.2", f"02:00:00:00:{net:02x}:02", "worker"),
             (f"{name}ps", f"10.9.{net}.254", f"02:00:00:00:{net:02x}:fe", "ps")]
    with open(os.path.join(d, "hosts"), "w") as f:
        f.writelines(f"{h} {role} {ip} {mac} {port}\n"
                     for port, (h, ip, mac, role) in enumerate(hosts))
    atp = os.path.join(build, "tools", "swemu-atp")
    p = subprocess.run([atp, "publish", "--hosts", os.path.join(d, "hosts"), "--out-dir",
                        os.path.join(d, "pub"), "--switch", f"{name}tor"], capture_output=True,
                       text=True)
    expect(p.returncode == 0, f"publish: {p.stderr}")
    job = os.path.join(d, "pub", "job")
    with open(os.path.join(d, "net.topo"), "w") as f:
        f.write(f"[topology]\nswitch = {name}tor {d}/pub/switch.ini\n")
        f.writelines(f"host = {name}tor:{port} name={h} ip={ip}/24 mac={mac}\n"
                     for port, (h, ip, mac, _) in enumerate(hosts))
        f.write(f"run = {name}ps swemu-atp ps --job {job} --idle-exit 2\n"
                f"run = {name}w0 {rank_command(job, 0)}\nrun = {name}w1 {rank_command(job, 1)}\n")
    start = time.monotonic()
    p = subprocess.run(["timeout", "90", os.path.join(build, "swemu", "swemu"), "--topology",
                        os.path.join(d, "net.topo"), "--backend", "netns", "--out-dir",
                        os.path.join(d, "out")], capture_output=True, text=True, cwd=d)
    seconds = time.monotonic() - start
    logs = {}
    for key, log in (("ps", "ps-run0"), ("w0", "w0-run1"), ("w1", "w1-run2")):
        path = os.path.join(d, "out", name + log + ".log")
        logs[key] = open(path).read() if os.path.exists(path) else ""
    expect(p.returncode == 0, f"{d}: exit {p.returncode}: {p.stderr}{logs}")
    expect(seconds < 60, f"{d}: {seconds:.1f} s")
    return logs


def expect_rank0_checks(r0, ps_log):
    """Rank 0's --check held (bit-equal to ATP's arithmetic, within the rules of Gloo, the same
    parameters on both ranks) and the PS summed most elements in the switch."""
    expect("check switch: equal to ATP's arithmetic" in r0, f"not bit-equal: {r0}")
    expect("check switch: largest loss difference to gloo" in r0, f"no comparison: {r0}")
    for mode in ("swemu", "gloo"):
        expect(f"{mode} parameters: identical on all 2 ranks" in r0, f"{mode} parameters: {r0}")
    ps = [l for l in ps_log.splitlines() if l.startswith("job 1: ")]
    share = float(ps[0].split("seqs completed, ")[1].split("%")[0]) if ps else 0
    expect(share > 50, f"elements summed in the switch: {ps_log}")
    return ps


def case_netns(build, tmp):
    def rank(job, r):
        return (f"GLOO_SOCKET_IFNAME=eth0 /usr/bin/python3 {SCRIPT} --model digits --workers 2 "
                f"--epochs 1 --init tcp://10.9.7.1:29411 --job {job} --build {build} --rank {r} "
                f"--out-dir {tmp}/netns/r{r}"
                + (" --check --accuracy-floor 0.3" if r == 0 else f" --port {PORT}"))
    logs = netns_run(build, os.path.join(tmp, "netns"), "ddp", 7, rank)
    r0 = logs["w0"]
    expect("swemu via hook over net\n" in r0, f"not over the published job: {r0}")
    expect(f"swemu via hook over net on DPDK port {PORT}" in logs["w1"],
           f"rank 1 not on its DPDK port: {logs['w1']}")
    ps = expect_rank0_checks(r0, logs["ps"])
    # About one gradient packet per seq reaches the PS, the switch's sum: each rank's rack is the
    # switch (fan-in 2). Read with the port as the rack (fan-in 1), the switch also sent ranks' own
    # packets on: about two per seq (4728 sums and 4737 originals for 4730 seqs).
    packets = int(ps[0].split(": ")[1].split(" gradient packets")[0]) if ps else 0
    seqs = int(ps[0].split("originals), ")[1].split(" seqs")[0]) if ps else 0
    expect(0 < seqs and packets < 1.5 * seqs, f"one packet per seq at the PS: {ps}")
    job = os.path.join(tmp, "netns", "pub", "job")
    # Outside the namespaces this machine has no rank's address: one line says so.
    p = subprocess.run(["/usr/bin/python3", "-c", f"import swemu; swemu.Worker.from_job({job!r}, 0)"],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.join(build, "hostlib", "python")))
    expect(p.returncode == 1 and "10.9.7.1, which is not an address of this machine" in p.stderr,
           f"outside: {p.returncode} {p.stderr}")


def case_torchrun(build, tmp):
    # torchrun as on two servers: one agent per host (--nnodes 2 --node_rank R), rendezvous at
    # rank 0's host; the script takes RANK and WORLD_SIZE, --init env://. --redirects 1 --tee 1:
    # torch 1.13's defaults ("0") fail under Python 3.11 (hostlib/python/README.md).
    def rank(job, r):
        return (f"GLOO_SOCKET_IFNAME=eth0 SWEMU_JOB={job} /usr/bin/python3 -m torch.distributed.run "
                f"--redirects 1 --tee 1 --nnodes 2 --nproc_per_node 1 --node_rank {r} "
                f"--master_addr 10.9.6.1 --master_port 29421 {SCRIPT} --model digits --epochs 1 "
                f"--build {build} --out-dir {tmp}/torchrun/r{r}"
                + (" --check --accuracy-floor 0.3" if r == 0 else ""))
    logs = netns_run(build, os.path.join(tmp, "torchrun"), "trun", 6, rank)
    r0 = logs["w0"]
    expect("[default0]:train_ddp: digits (13706 parameters), 2 workers" in r0 and
           "swemu via hook over net" in r0, f"not rank 0 of 2 under torchrun: {r0}")
    expect_rank0_checks(r0, logs["ps"])


def case_options(build, tmp):
    shutil.rmtree(os.path.join(tmp, "options"), ignore_errors=True)
    for args in (["--workers", "0"], ["--workers", "3"], ["--batch", "11"], ["--lr", "-1"],
                 ["--modes", "swemu,bogus"], ["--modes", "gloo,gloo"], ["--via", "x"],
                 ["--transport", "tcp"], ["--model", "vgg"], ["--epochs", "0"],
                 ["--train-size", "8"], ["--bucket-mb", "0"], ["--accuracy-floor", "2"],
                 ["--width", "2"], ["--rank", "0"], ["--rank", "2", "--job", SCRIPT],
                 ["--job", SCRIPT], ["--rank", "0", "--job", "/nonexistent"],
                 ["--port", PORT], ["--rank", "0", "--modes", "gloo", "--port", PORT],
                 ["--bogus"], ["--out-dir", "/etc/passwd"]):
        env = {k: v for k, v in os.environ.items()
               if k not in ("RANK", "SWEMU_JOB", "SWEMU_PORT")}
        p, out = run(args + ["--build", build], tmp, "options", env=env)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2, f"{args}: exit {p.returncode}")
        expect(len(lines) == 1 or (args == ["--bogus"] and lines[-1].startswith("train_ddp")),
               f"{args}: {p.stderr!r}")
        expect(not os.path.exists(os.path.join(out, "ddp.csv")), f"{args}: wrote output")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("case", choices=("digits", "resnet", "netns", "torchrun", "options"))
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    globals()["case_" + a.case](os.path.abspath(a.build), os.path.abspath(a.tmp))
    if PROBLEMS:
        print("\n".join(PROBLEMS))
        sys.exit(1)
    print(f"{a.case}: ok")


if __name__ == "__main__":
    main()
