# Runs the test_* functions of one portable test module and prints one line
# per test.  Runs under MicroPython and CPython alike:
#   micropython runner.py <module> <tmpdir>
import sys


def run(modname, tmp):
    mod = __import__(modname)
    mod.TMP = tmp
    names = sorted(n for n in dir(mod) if n.startswith("test_"))
    failed = 0
    for n in names:
        try:
            getattr(mod, n)()
            print("PASS " + n)
        except Exception as e:   # report every failure, keep going
            failed += 1
            print("FAIL " + n + ": " + repr(e))
            if hasattr(sys, "print_exception"):
                sys.print_exception(e)
            else:
                import traceback
                traceback.print_exc(file=sys.stdout)
    print("DONE %d %d" % (len(names), failed))
    return failed


if __name__ == "__main__":
    sys.exit(1 if run(sys.argv[1], sys.argv[2]) else 0)
