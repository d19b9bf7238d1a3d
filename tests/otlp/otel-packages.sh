# otel-packages.sh - sourced: otel_packages SRCDIR makes sure the OpenTelemetry OTLP
# packages (package-lock.json) are in SRCDIR/node_modules. Returns 1 (with a SKIP line)
# when node or npm is missing or the npm registry cannot be reached.
otel_packages() {
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		echo "SKIP: node or npm not found"
		return 1
	fi
	[ -f "$1/node_modules/@opentelemetry/otlp-transformer/package.json" ] && return 0
	if ! (cd "$1" && npm ci --no-audit --no-fund); then
		echo "SKIP: npm ci failed (is the npm registry reachable?)"
		return 1
	fi
}
