"""The script that measures a benchmark command (or the entry point in a process of its own,
for callgrind) in the sandbox: each side in its own folder, built once, then warm-ups and
interleaved pairs, pinned to one CPU where the platform allows. Standard library only: it
runs in the sandbox's own interpreter (``python -I``)."""

SCRIPT = r"""
import json, math, os, re, subprocess, sys, time

job = json.loads(sys.stdin.read())
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

def fail(message):
    sys.stdout.write("\n" + json.dumps({"error": message}) + "\n")
    sys.exit(0)

def tail(data):
    return " ".join(data.decode("utf-8", "replace").split())[-300:]

def execute(side, stdin, valgrind=False):
    argv = job["argv"] or ["/bin/sh", "-c", job["command"]]
    if valgrind:
        argv = [job["valgrind"], "--tool=callgrind", "--callgrind-out-file=/dev/null",
                "--trace-children=yes"] + argv
    data = None if stdin is None else stdin.encode("utf-8")
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=side, input=data, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        fail("side %s: the benchmark exited with %d: %s"
             % (side, done.returncode, tail(done.stderr) or tail(done.stdout)))
    return elapsed, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")

def printed(side, out):
    if job["pattern"]:
        found = list(re.finditer(job["pattern"], out))
        if not found:
            fail("side %s: the benchmark's output has no match for %r" % (side, job["pattern"]))
        text = found[-1].group(1) if found[-1].groups() else found[-1].group(0)
    else:
        found = NUMBER.findall(out)
        if not found:
            fail("side %s: the benchmark printed no number" % side)
        text = found[-1]
    try:
        number = float(text)
    except ValueError:
        fail("side %s: the benchmark printed %r, not a number" % (side, text[:40]))
    if not (number > 0 and math.isfinite(number)):
        fail("side %s: the benchmark printed %r: a gain is a ratio, so the number must be "
             "positive" % (side, text[:40]))
    return number

def value(side, stdin):
    if job["metric"] == "wall":
        return execute(side, stdin)[0]
    if job["metric"] == "instructions":
        # every process the command started is counted (the shell, the build's outputs)
        found = re.findall(r"Collected\s*:\s*(\d+)", execute(side, stdin, True)[2])
        if not found:
            fail("side %s: callgrind reported no instruction count" % side)
        return float(sum(int(n) for n in found))
    return printed(side, execute(side, stdin)[1])

def best(values):
    return max(values) if job["direction"] == "higher" else min(values)

cpu = None
if hasattr(os, "sched_setaffinity"):
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
os.environ["PYTHONHASHSEED"] = "0"  # one hash order for every run: fewer stray instructions
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # each run compiles alike (no first-run cache)
sides = job["sides"]
for side in sides:   # the sandbox writes plain files: executable ones get their mode back
    for name in job["executables"]:
        os.chmod(os.path.join(side, name), 0o755)
if job["build"]:
    for side in sides:
        done = subprocess.run(["/bin/sh", "-c", job["build"]], cwd=side, capture_output=True)
        if done.returncode != 0:
            fail("side %s: the build exited with %d: %s"
                 % (side, done.returncode, tail(done.stderr) or tail(done.stdout)))
# the instructions of a Python run with no call of the entry point: subtracted, so the count
# is the entry point's own work, not the interpreter's start
overhead = {side: 0.0 for side in sides}
if job["overhead_stdin"] is not None:
    overhead = {side: value(side, job["overhead_stdin"]) for side in sides}
for _ in range(job["warmups"]):
    for side in sides:
        value(side, job["stdin"])

def measured(side):
    return best([max(value(side, job["stdin"]) - overhead[side], 1.0 if overhead[side] else 0.0)
                 for _ in range(job["repeat"])])

pairs = []
for i in range(job["count"]):
    if i % 2 == 0:   # alternate who goes first: an order effect cancels over the pairs
        a = measured(sides[0]); b = measured(sides[1])
    else:
        b = measured(sides[1]); a = measured(sides[0])
    pairs.append([a, b])
sys.stdout.write("\n" + json.dumps({"pairs": pairs, "cpu": cpu}) + "\n")
"""
