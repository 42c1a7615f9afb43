# Sourced by the scripts that add up test counts (test.sh, check.sh, sanitize.sh): sed
# scripts that print a suite's count of passed tests from its output. Each matches only a
# run where every test passed: a skipped test (a missing keyring) is not a pass.
swift_counter='s/.*Test run with \([0-9]*\) tests\{0,1\} .* passed.*/\1/p'
pytest_counter='s/^\([0-9]*\) passed\(, [0-9]* deselected\)\{0,1\}\(, [0-9]* subtests passed\)\{0,1\} in .*/\1/p'
# A stage of scripts/stage.sh, which closes with "NAME: N passed, 0 failed".
#   stage_counter NAME
stage_counter() { echo "s/^$1: \([0-9]*\) passed, 0 failed\$/\1/p"; }
