# Writes a new run folder's proxy log as fast as one writer can (one write(2)
# a line on O_APPEND, as the proxy's decision log does), then its run.end.
# Prints the time of the first write and of the last (CLOCK_REALTIME, s).
import json, os, sys, time
runs, n = sys.argv[1], int(sys.argv[2])
run_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-bench"
d = os.path.join(runs, run_id)
os.makedirs(d, mode=0o700)
def now_iso():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)
ev = os.open(os.path.join(d, "events.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
start = time.time()
os.write(ev, (json.dumps({"v": 1, "time": now_iso(), "run": run_id, "type": "run.start", "command": "bench"}) + "\n").encode())
px = os.open(os.path.join(d, "proxy.jsonl"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
for i in range(n - 1):
    line = {"time": now_iso(), "method": "DNS", "host": f"h{i}.example", "port": 53, "verdict": "denied" if i % 3 else "allowed",
            "reason": "blocked-by-allowlist" if i % 3 else "allowed", "status": 0, "type": "A", "rcode": "NXDOMAIN",
            "bytes_up": 0, "bytes_down": 0, "duration_ms": 0}
    os.write(px, (json.dumps(line, separators=(",", ":")) + "\n").encode())
os.write(ev, (json.dumps({"v": 1, "time": now_iso(), "run": run_id, "type": "run.end", "status": "ok"}) + "\n").encode())
print(start, time.time())
