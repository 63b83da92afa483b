#!/usr/bin/python3
"""Runs the README's shell code blocks as written (issue 34; ctest: readme_*).

  readme_snippets.py --list
  readme_snippets.py --show [--source DIR]
  readme_snippets.py --run GROUP --source DIR --build DIR --work DIR [--timeout S] [--block TEXT]

Every fenced block of README.md is read line by line. A line is a command when its first word
is a path (has a '/'), a variable assignment or a program on PATH, or when the line before
ended with a backslash; a line that is not a command and not a comment is output the README
shows (the block of `swemu --bench`'s table), and is not run. Each command belongs to one group:
EXCLUDED names the commands no test runs and why, LONG the commands of more than 30 s and the
test that runs them, VIRTUAL_TIME the others that run in virtual time or offline only (group
`fast_virtual`, no real-time lock); every other command is in the group `fast`. The tables must
name commands the README has, so that they stay exact. --list prints each group, its timeout,
short or long (ctest label readme_long) and realtime or virtual (whether it takes the lock).

--run GROUP copies the source tree (without .git, out/ and build*/) into a new WORK/tree-*, links
its build to BUILD, and there runs the group's commands block by block, each block in one
bash, in README order, with the block's state (variables, background jobs) kept. Before each
command it prints `README.md:LINE: $ COMMAND`; a command that fails ends its block with
`README.md:LINE: FAILED, exit status S: COMMAND`, and the next block runs. A background job
still running when its block ends gets SIGINT (as the README says swemu takes) and must then
exit 0. A process the block leaves behind (still running 2 s after its bash ended), or a run past
--timeout, fails too.
Exit status: 0 every command succeeded, 1 some failed, 2 bad options.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

README = "README.md"

# Commands no test runs, by their text in the README, and why.
TOR_GUIDE = ("\"swemu as the ToR of your servers\": for a server with NICs bound to DPDK and a "
             "hosts list of real servers; the same job in namespaces is tested "
             "(AtpServerTest.TheBundledJobInNamespacesIsExactAndFasterInNetwork)")
TOR_RACK = ("\"A ToR for a rack\": configs/tor.ini on four NIC ports bound to DPDK, its "
            "hosts real servers")
EXCLUDED = {
    "tools/bootstrap.sh demo":
        "Quick start: installs packages, reconfigures and rebuilds build/ under the running "
        "tests, then runs the one-rack ATP demo (`swemu-atp demo --out-dir out/atp_demo`), "
        "which no test here runs; the ATP block's two-rack demo runs in readme_atp_demo",
    "tools/bootstrap.sh test":
        "Quick start: runs the whole ctest suite, this test included (it would recurse), and "
        "rebuilds build/ and build-asan/ under the running tests",
    # The deployment guide's swemu server: real NICs, the machine's hugepages, a user's hosts.
    "/usr/sbin/modprobe vfio-pci": TOR_GUIDE,
    "/usr/bin/dpdk-devbind.py --bind=vfio-pci 0000:3b:00.0 0000:3b:00.1 0000:3b:00.2": TOR_GUIDE,
    "echo 1024 > /proc/sys/vm/nr_hugepages": TOR_GUIDE,
    "build/tools/swemu-atp publish --hosts hosts.txt --out-dir pub --link-rate 25G \\\n"
    "  --port-devargs 0=0000:3b:00.0 --port-devargs 1=0000:3b:00.1 --port-devargs 2=0000:3b:00.2":
        TOR_GUIDE,
    "build/swemu/swemu --config pub/switch.ini": TOR_GUIDE,
    # The plain ToR on real NICs; the same file in namespaces runs in this group
    # (configs/tor_netns.topo) and in NetnsRouterTest.TheBundledTorConfigNeedsNoEntryPerHost.
    "/usr/bin/dpdk-devbind.py --bind=vfio-pci "
    "0000:01:00.0 0000:01:00.1 0000:02:00.0 0000:02:00.1": TOR_RACK,
    "build/swemu/swemu --config configs/tor.ini --stats-interval 1 -- -l 0": TOR_RACK,
    "build/tools/swemu-cli show mac": TOR_RACK,
    "build/tools/swemu-cli show arp": TOR_RACK,
    "build/tools/swemu-cli show ndp": TOR_RACK,
    # One rank per real server (R is each server's rank); the same under torchrun in namespaces
    # is ctest tools_train_ddp_torchrun.
    "SWEMU_JOB=configs/ddp_netns/job GLOO_SOCKET_IFNAME=eth0 torchrun --redirects 1 --tee 1 \\\n"
    "    --nnodes 2 --nproc_per_node 1 --node_rank R --master_addr 10.0.7.1 --master_port 29411 \\\n"
    "    tools/train/train_ddp.py --check":
        "\"Train with PyTorch DDP through swemu\": one torchrun per server, R its rank; in "
        "namespaces it is ctest tools_train_ddp_torchrun",
}

# Commands of more than 30 s, by their text in the README: the test that runs them (ctest
# readme_NAME, label readme_long), its timeout in seconds and the time measured on the 2-core
# root Debian 12 development machine while other builds and tests ran on it. Commands sharing a
# name run in one bash, in README order.
MICROBENCHMARKS = ("microbenchmarks", 2400,
                   "787 s: the Release build 194 s, the two benchmarks 37 s and 8 s, "
                   "compare.sh 418 s (93 s of it setup: packages, the DPDK source), scaling.sh "
                   "127 s")
PAPER_SCALE = ("paper_scale", 2400,
               "919 s on a fresh clone at 9051960, the machine otherwise idle")
LONG = {
    "bench/engine/compare.sh": PAPER_SCALE,
    "tools/engine_scale.sh build": PAPER_SCALE,
    "build/tools/swemu-dlcp sim --tors 9 --hosts-per-tor 16 --spines 4 --link-rate 100G "
    "--scale 1 \\\n  --workers 36 --engine-stats": PAPER_SCALE,
    "build/tools/swemu-goat sim --fabric fat-tree --workers 40 --scale 1 --window 1024 \\\n"
    "  --stage-sram 4MiB --engine-stats": PAPER_SCALE,
    "build/tools/swemu-atp demo --workers 4 --racks 2":
        ("atp_demo", 900, "310 s, the demo reporting 17-76% of its CPU time lost to others"),
    "tools/pcn_experiment.sh --out out/pcn-rt": ("pcn_experiment", 400, "90 s"),
    "/usr/bin/python3 tools/plink/plink_figure8.py --plot out/plink_figure8.png":
        ("plink_figure8", 900, "321 s"),
    # One sequence: the benchmarks need the build before them, scaling.sh the swemu that
    # compare.sh builds in build-rel.
    "cmake -S . -B build-rel -G Ninja -DCMAKE_BUILD_TYPE=Release": MICROBENCHMARKS,
    "cmake --build build-rel --target pipeline_l2l3_bench pipeline_parser_bench": MICROBENCHMARKS,
    "build-rel/bench/pipeline_l2l3_bench": MICROBENCHMARKS,
    "build-rel/bench/pipeline_parser_bench": MICROBENCHMARKS,
    "bench/realtime/compare.sh": MICROBENCHMARKS,
    "bench/realtime/scaling.sh": MICROBENCHMARKS,
}

# Commands of 30 s or less that run in virtual time or offline only (simulations, offline
# replays, plans, analyses, --show-resources, help), by their text in the README: no DPDK port,
# namespace, /run/swemu.sock or real-time swemu, so their group, fast_virtual, runs without the
# real-time lock, beside the tests that hold it. Every other such command is in the group fast,
# under the lock.
VIRTUAL_TIME = {
    "build/swemu/swemu --config configs/leaf.ini --offline \\\n"
    "  --in 0=configs/pcap/h0_to_all.pcap --out-dir out/leaf",
    "build/swemu/swemu --topology configs/leaf_spine.topo --offline --out-dir out/leaf_spine \\\n"
    "  --in leaf1:0=configs/pcap/h0_to_all.pcap --in leaf2:0=configs/pcap/h2_to_all.pcap",
    "build/tools/swemu-dlcp sim --topology configs/leaf_spine.topo",
    "build/tools/swemu-atp sim --topology configs/atp_two_rack.topo --job configs/atp_two_rack.job",
    "build/tools/swemu-atp sim --topology configs/atp_two_rack_plain.topo "
    "--job configs/atp_two_rack.job",
    "build/swemu/swemu --config configs/atp_rack.ini --show-resources",
    'PYTHONPATH=build/hostlib/python /usr/bin/python3 -c "import swemu; help(swemu.Worker)"',
    "build/tools/swemu-pcn sim --out out/pcn-sim",
    "build/tools/swemu-dlcp sim",
    "build/tools/swemu-dlcp thresholds --model ResNet50 --buffer 512KB --load 1.2",
    "build/swemu/swemu --config configs/dlcp.ini --show-resources",
    "build/tools/swemu-goat plan",
    "build/tools/swemu-goat publish --out-dir out/goat --pcap",
    "build/tools/swemu-goat sim",
    "build/tools/swemu-goat sim --fabric leaf-spine --workers 35",
    "C=configs/goat_testbed",
    "build/swemu/swemu --topology $C/goat.topo --offline --out-dir out/goat_offline \\\n"
    "  --in s1:0=$C/w1.pcap --in s1:1=$C/w2.pcap --in s1:2=$C/w3.pcap "
    "--in s1:3=$C/w4.pcap \\\n"
    "  --in s2:0=$C/w5.pcap --in s2:1=$C/w6.pcap --in s2:2=$C/w7.pcap "
    "--in s2:3=$C/w8.pcap",
    "build/tools/swemu-analyze out/goat_offline/s3-port0.pcap",
    "build/tools/swemu-plink probe",
    "build/tools/swemu-plink probe --fanout 2,2,2 --per-rack 8 --tier-delays 32us,16us,4us,1us",
    "build/tools/swemu-plink experiment --assignments 5",
    "build/tools/swemu-gen --workload atp --layers 10 --rate 10G --background-flows 1 "
    "--background-rate 4G --background-bytes 2M --background-ecn --out out/look/w{w}.pcap",
    "build/swemu/swemu --offline --config configs/atp_rack.ini --in 0=out/look/w0.pcap "
    "--in 1=out/look/w1.pcap --in 2=out/look/w2.pcap --in 3=out/look/w3.pcap "
    "--out-dir out/look/run --telemetry out/look/run/telemetry.csv",
    "build/tools/swemu-analyze out/look/run --plot out/look/run.png --csv out/look/csv",
    "build/swemu/swemu --config configs/leaf.ini --show-resources",
    "build/swemu/swemu --topology configs/leaf_spine.topo --offline --partitions 2 \\\n"
    "  --in leaf1:0=configs/pcap/h0_to_all.pcap --in leaf2:0=configs/pcap/h2_to_all.pcap \\\n"
    "  --out-dir out/partitions",
    "build/bench/swemu_engine_bench --partitions 2",
    "build/swemu/swemu --topology configs/leaf_spine.topo --offline --partitions 1 --quiet \\\n"
    "  --in leaf1:0=configs/pcap/h0_to_all.pcap --in leaf2:0=configs/pcap/h2_to_all.pcap "
    "--out-dir out/one",
    "mpirun --allow-run-as-root -q --oversubscribe -np 2 build/swemu/swemu "
    "--topology configs/leaf_spine.topo \\\n"
    "  --offline --in leaf1:0=configs/pcap/h0_to_all.pcap --in leaf2:0=configs/pcap/h2_to_all.pcap "
    "--out-dir out/ranks",
    'diff -r out/one out/ranks && echo "the same bytes"',
    "mpirun --allow-run-as-root -q --oversubscribe -np 2 build/bench/swemu_engine_bench",
}

FAST = "fast"
FAST_VIRTUAL = "fast_virtual"
FAST_TIMEOUT = 300


class Command:
    def __init__(self, line, text):
        self.line, self.text = line, text

    def key(self):
        """The command as EXCLUDED and LONG name it: without its trailing comment."""
        return strip_comment(self.text)


class Block:
    def __init__(self, first, last):
        self.first, self.last = first, last
        self.commands, self.output = [], []


def strip_comment(text):
    end = text.find(" #")
    while end >= 0:
        try:
            shlex.split(text[:end])
            return text[:end].rstrip()
        except ValueError:  # the '#' is inside quotes
            end = text.find(" #", end + 1)
    return text.rstrip()


def fenced_blocks(lines):
    """(first line number, lines) of each ``` block; numbers count from 1."""
    blocks, start = [], None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if start is None:
                start = number
            else:
                blocks.append((start + 1, lines[start:number - 1]))
                start = None
    return blocks


def is_command(line):
    first = line.split()[0].lstrip("({!")
    if not first:
        return True  # a subshell, group or negation: '( cd x && make )'
    return ("/" in first or re.match(r"[A-Za-z_][A-Za-z0-9_]*=", first) is not None
            or shutil.which(first) is not None)


def parse_block(first, lines):
    block = Block(first, first + len(lines) - 1)
    continued = False
    for number, line in enumerate(lines, first):
        stripped = line.strip()
        if continued:
            block.commands[-1].text += "\n" + line
        elif not stripped or stripped.startswith("#"):
            continue
        elif is_command(stripped):
            block.commands.append(Command(number, line.rstrip()))
        else:
            block.output.append(number)
        continued = not stripped.startswith("#") and stripped.endswith("\\")
    return block


def read_readme(source):
    with open(os.path.join(source, README)) as f:
        lines = f.read().split("\n")
    return [parse_block(first, body) for first, body in fenced_blocks(lines)]


def group_of(command):
    if command.key() in EXCLUDED:
        return None
    if command.key() in LONG:
        return LONG[command.key()][0]
    return FAST_VIRTUAL if command.key() in VIRTUAL_TIME else FAST


def stale_entries(blocks):
    """Lines naming table entries that no README command matches exactly once."""
    keys = [c.key() for b in blocks for c in b.commands]
    problems = []
    tables = (("EXCLUDED", EXCLUDED), ("LONG", LONG), ("VIRTUAL_TIME", VIRTUAL_TIME))
    for table, entries in tables:
        for key in entries:
            if keys.count(key) != 1:
                problems.append(f"{table} names `{key}`, which {README} has {keys.count(key)} "
                                "times (once expected): update readme_snippets.py")
    return problems


def groups():
    """(name, timeout) of every group: fast and fast_virtual first, then LONG's in their order."""
    seen = {FAST: FAST_TIMEOUT, FAST_VIRTUAL: FAST_TIMEOUT}
    for name, timeout, _ in LONG.values():
        seen[name] = max(seen.get(name, 0), timeout)
    return list(seen.items())


def list_line(name, timeout):
    """A group as --list prints it: name, timeout, short or long, realtime or virtual (the
    lock it needs)."""
    length = "short" if name in (FAST, FAST_VIRTUAL) else "long"
    clock = "virtual" if name == FAST_VIRTUAL else "realtime"
    return f"{name} {timeout} {length} {clock}"


def show(blocks):
    for block in blocks:
        kind = "commands" if block.commands else "output only, nothing to run"
        print(f"{README}:{block.first}-{block.last}: {kind}")
        for command in block.commands:
            group = group_of(command)
            where = "excluded: " + EXCLUDED[command.key()] if group is None else group
            print(f"  {command.line}: [{where}] {command.key()}")
        if block.output:
            print("  output lines, not run: " + ", ".join(map(str, block.output)))


HELPERS = r"""
declare -A __readme_bg
__readme_start() {  # line command
  printf 'README.md:%s: $ %s\n' "$1" "$2"
  echo "$1" > "$__readme_status"
  __readme_t0=${EPOCHREALTIME/./}
}
__readme_check() {  # status line command
  local us=$((${EPOCHREALTIME/./} - __readme_t0))
  if [ "$1" -eq 0 ]; then
    printf 'README.md:%s: ok, %d.%d s\n' "$2" $((us / 1000000)) $((us / 100000 % 10))
    return
  fi
  printf 'README.md:%s: FAILED, exit status %s after %d.%d s: %s\n' "$2" "$1" \
    $((us / 1000000)) $((us / 100000 % 10)) "$3"
  __readme_stop_bg
  exit 1
}
__readme_note_bg() {  # line: remember the job a command left in the background
  [ -n "$!" ] && [ -z "${__readme_bg[$!]:-}" ] && __readme_bg[$!]=$1
  return 0
}
__readme_running() {  # pid seconds: is it still running after waiting up to that long?
  local i
  for ((i = 0; i < $2 * 10; i++)); do kill -0 "$1" 2>/dev/null || return 1; sleep 0.1; done
  kill -0 "$1" 2>/dev/null
}
__readme_stop_bg() {  # every background job ends by itself or on SIGINT, with status 0
  local pid rc status=0
  for pid in "${!__readme_bg[@]}"; do
    if __readme_running "$pid" 3; then
      echo "README.md:${__readme_bg[$pid]}: the block leaves this job running: SIGINT"
      kill -INT "$pid"
      __readme_running "$pid" 30 && { kill -KILL "$pid"; echo "  (not stopped: SIGKILL)"; }
    fi
    wait "$pid"; rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "README.md:${__readme_bg[$pid]}: FAILED, background job exit status $rc"
      status=1
    fi
  done
  __readme_bg=()
  return $status
}
"""


def block_script(commands, status_file):
    parts = [HELPERS, f"__readme_status={shlex.quote(status_file)}"]
    for c in commands:
        quoted = shlex.quote(c.text.replace("\n", " "))
        parts += [f"__readme_start {c.line} {quoted}",
                  c.text,
                  f"__readme_check $? {c.line} {quoted}",
                  f"__readme_note_bg {c.line}"]
    parts.append("__readme_stop_bg || exit 1")
    return "\n".join(parts) + "\n"


def fresh_tree(source, build, work):
    """A new copy per run, so that two runs of a group never share one."""
    tree = tempfile.mkdtemp(prefix="tree-", dir=work)
    os.rmdir(tree)

    def skip(directory, names):
        if os.path.samefile(directory, source):
            return [n for n in names if n in (".git", "out") or n.startswith("build")]
        return []

    shutil.copytree(source, tree, ignore=skip, symlinks=True)
    os.symlink(os.path.abspath(build), os.path.join(tree, "build"))
    return tree


def session_processes(sid):
    """Processes of session sid that have not exited (zombies aside)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append((int(pid), name))
    return found


def still_running(sid, grace=2.0):
    """Processes of session sid left once the block's bash has exited, after `grace` seconds for
    those on their way out: a helper its program started that exits when it sees its parent
    gone (Python's multiprocessing resource tracker after torch.multiprocessing) is not one
    the block left behind."""
    deadline = time.monotonic() + grace
    left = session_processes(sid)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = session_processes(sid)
    return left


def end_session(sid):
    for sig, wait in ((signal.SIGINT, 10), (signal.SIGKILL, 5)):
        for pid, _ in session_processes(sid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while session_processes(sid) and time.monotonic() < deadline:
            time.sleep(0.2)


def last_line(status_file):
    try:
        with open(status_file) as f:
            return f.read().strip()
    except OSError:
        return "?"


def run_block(block, commands, tree, deadline):
    """Runs the block's chosen commands in one bash; True when all succeeded."""
    status_file = os.path.join(tree, ".readme_current_line")
    script = os.path.join(tree, f".readme_block_{block.first}.sh")
    with open(script, "w") as f:
        f.write(block_script(commands, status_file))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    sys.stdout.flush()
    proc = subprocess.Popen(["/bin/bash", script], cwd=tree, env=env, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        ok = proc.wait(timeout=max(1, deadline - time.monotonic())) == 0
        left = still_running(proc.pid)
    except subprocess.TimeoutExpired:
        line = last_line(status_file)
        print(f"{README}:{line}: FAILED, still running at the test's --timeout: "
              f"{command_at(commands, line)}")
        ok, left = False, []
    if left:
        print(f"{README}:{block.first}-{block.last}: FAILED, the block left processes running: "
              + ", ".join(f"{pid} {name}" for pid, name in left))
        ok = False
    end_session(proc.pid)
    proc.wait()
    return ok


def command_at(commands, line):
    return next((c.key() for c in commands if str(c.line) == line), "?")


def chosen_blocks(name, blocks, text):
    """The blocks --block TEXT names (all without it), or a one-line error."""
    if text is None:
        return blocks
    chosen = [b for b in blocks if any(text in c.text for c in b.commands)]
    if not any(group_of(c) == name for b in chosen for c in b.commands):
        one_line_error(f"--block {text}: no block with a command of group {name} has this")
    return chosen


def run_group(name, blocks, args):
    chosen = chosen_blocks(name, blocks, args.block)
    problems = stale_entries(blocks)
    for problem in problems:
        print(problem)
    os.makedirs(args.work, exist_ok=True)
    tree = fresh_tree(args.source, args.build, args.work)
    deadline = time.monotonic() + args.timeout
    failed = []
    for block in chosen:
        commands = [c for c in block.commands if group_of(c) == name]
        if commands:
            print(f"== {README}:{block.first}-{block.last} in {tree}", flush=True)
            if not run_block(block, commands, tree, deadline):
                failed.append(f"{block.first}-{block.last}")
    if failed:
        print(f"readme_{name}: failed blocks at {README} lines " + ", ".join(failed) +
              f"; the tree is kept in {tree}")
    else:
        shutil.rmtree(tree, ignore_errors=True)
    return 1 if failed or problems else 0


def one_line_error(message):
    print(f"readme_snippets: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.error = one_line_error
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--list", action="store_true", help="print each group and its timeout")
    mode.add_argument("--show", action="store_true", help="print every block's commands")
    mode.add_argument("--run", metavar="GROUP", help="run a group's commands")
    parser.add_argument("--source", default=os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), help="the source tree (default: this one)")
    parser.add_argument("--build", help="the build directory the snippets call build/")
    parser.add_argument("--work", help="a directory for the tree's copy and the scripts")
    parser.add_argument("--timeout", type=float, help="seconds for the whole group")
    parser.add_argument("--block", metavar="TEXT",
                        help="run only the group's commands in the blocks where a command "
                             "contains TEXT")
    args = parser.parse_args(argv)
    if args.run is not None:
        check_run_args(args)
    return args


def check_run_args(args):
    names = dict(groups())
    if args.run not in names:
        one_line_error(f"--run {args.run}: no such group (--list shows them)")
    if not args.build or not os.path.isdir(args.build):
        one_line_error(f"--build {args.build}: not a directory")
    if not args.work:
        one_line_error("--run needs --work")
    if not os.path.isfile(os.path.join(args.source, README)):
        one_line_error(f"--source {args.source}: has no {README}")
    if args.timeout is None:
        args.timeout = names[args.run]


def main(argv):
    args = parse_args(argv)
    if args.list:
        for name, timeout in groups():
            print(list_line(name, timeout))
        return 0
    blocks = read_readme(args.source)
    if args.show:
        show(blocks)
        problems = stale_entries(blocks)
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    return run_group(args.run, blocks, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
