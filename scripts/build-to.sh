#!/usr/bin/env bash
# Compiles the service into another output folder (e.g. .build/mywork) — lets several people run the
# e2e specs from one checkout without rebuilding each other's dist/: TEST_DIST_DIR=.build/mywork npx jest …
set -euo pipefail
out=${1:?usage: scripts/build-to.sh OUT_DIR}
npx tsc -p tsconfig.build.json --outDir "$out" || true
npx tsc -p migrations/tsconfig.json --outDir "$out/migrations"
