"""A bench peer process (bench/c/ait_runner.c, bench/ort_runner.js,
bench/torch_runner.py) driven over its stdin/stdout line protocol, with a
time limit on every answer."""
import os
import select
import subprocess
import time


class RunnerError(Exception):
    pass


class Runner:
    def __init__(self, label, argv, env, timeout):
        self.label, self.timeout, self.buf = label, timeout, b""
        self.stderr_path = None
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=env)
        except OSError as e:
            raise RunnerError(f"{label}: cannot start {argv[0]}: {e}") from e
        self.expect("ready")

    def line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise RunnerError(f"{self.label}: no answer within {timeout:.0f} s")
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    err = self.proc.stderr.read().decode(errors="replace").strip().splitlines()
                    self.close()
                    raise RunnerError(f"{self.label}: exited ({' | '.join(err[-3:]) or 'no message'})")
                self.buf += chunk
        text, self.buf = self.buf.split(b"\n", 1)
        text = text.decode(errors="replace")
        if text.startswith("error "):
            self.close()
            raise RunnerError(f"{self.label}: {text[6:]}")
        return text

    def expect(self, word):
        text = self.line(self.timeout)
        if text != word:
            self.close()
            raise RunnerError(f"{self.label}: expected '{word}', got '{text[:200]}'")

    def send(self, cmd):
        try:
            self.proc.stdin.write((cmd + "\n").encode())
            self.proc.stdin.flush()
        except OSError as e:
            raise RunnerError(f"{self.label}: cannot send '{cmd}': {e}") from e

    def outputs(self, folder):
        self.send(f"out {folder}")
        self.expect("ok")

    def times(self, n, per_run_estimate=1.0, cmd="time"):
        """n runs' times in ms: wall clock ("time"), or each run's process CPU time ("cpu")."""
        self.send(f"{cmd} {n}")
        text = self.line(self.timeout + n * per_run_estimate * 3)
        parts = text.split()
        if not parts or parts[0] != "t" or len(parts) != n + 1:
            raise RunnerError(f"{self.label}: bad answer to '{cmd} {n}': '{text[:200]}'")
        return [float(p) for p in parts[1:]]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
