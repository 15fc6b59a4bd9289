#!/bin/bash
# Every grtrace command line of README.md and docs/*.md that can run without a GPU, run against
# the fake driver (tests/tools/doc_examples.py): a doc example that stops working fails here.
set -u
exec python3 tests/tools/doc_examples.py "${1:-build}"
