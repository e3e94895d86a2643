"""How observations are reported: one line each, `ok` or `DIFF`, and the differences kept for
the exit code. The entry point sets the two flags from its command line."""

FAILS = []  # the labels of the observations that differed
VERBOSE = False  # print the observations that matched too
REDBLOOM = False  # expect redbloom's deliberate differences (see the entry point's --redbloom)


def check(label, got, expected):
    if got == expected:
        if VERBOSE:
            print("  ok    %s: %s" % (label, got))
    else:
        FAILS.append(label)
        print("  DIFF  %s:\n          got      %s\n          expected %s" % (label, got, expected))


def section(title):
    print("\n== " + title)


def note(text):
    print("  note  " + text)
