"""Cases run in a child process, so that a crash inside a kernel (SIGSEGV, SIGABRT) fails its case instead
of killing pytest. A test module lists its cases by name and ends with `if __name__ == "__main__":
child_main(run_case)`; `run_cases(__file__, names)` runs it as a script. The child prints one JSON line per
finished case; when it dies, the case it was running gets {"crash": exit code, "stderr": ...} and a new
child goes on from the next case."""
import json
import os
import subprocess
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)


def run_cases(script, names, timeout=600):
    """{name: the JSON object the child printed for it, or the crash}."""
    results, todo = {}, list(names)
    path = os.pathsep.join([ROOT, TESTS] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
    env = dict(os.environ, PYTHONPATH=path)
    while todo:
        proc = subprocess.run([sys.executable, os.path.abspath(script), *todo], capture_output=True, text=True,
                              check=False, env=env, cwd=ROOT, timeout=timeout)
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                results[r.pop("case")] = r
        todo = [n for n in todo if n not in results]
        if todo:  # the child died in todo[0]
            results[todo.pop(0)] = {"crash": proc.returncode, "stderr": proc.stderr[-3000:]}
    return results


def child_main(run_case):
    """The child: run_case(name) -> a JSON-able dict, for each name on the command line, in order."""
    for name in sys.argv[1:]:
        print(json.dumps({"case": name, **run_case(name)}), flush=True)


def outcome(fn, *args):
    """{'error': type name, 'message': ...} if fn(*args) raises, else {'value': what it returned}."""
    try:
        value = fn(*args)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return {"error": type(e).__name__, "message": str(e)}
    return {"value": value}
