# Shared helpers of the import tests (sourced). BIN is lineage-validate.
fails=0
num() { # num JSON KEY -> the first integer value of "KEY":N
	printf '%s' "$1" | grep -o "\"$2\":[0-9]*" | head -n 1 | cut -d: -f2
}
expect_eq() { # expect_eq WHAT GOT WANT
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1: got '${2}', want '$3'"
		fails=$((fails + 1))
	else
		echo "ok: $1 = $3"
	fi
}
expect_keys() { # expect_keys LABEL JSON key=value...
	label=$1 json=$2
	shift 2
	for kv in "$@"; do
		expect_eq "$label $kv" "$(num "$json" "${kv%%=*}")" "${kv#*=}"
	done
}
count_cause() { # count_cause JSON KIND CAUSE -> listed findings of that kind and cause
	printf '%s' "$1" | grep -o "\"kind\":\"$2\",\"cause\":\"$3\"" | wc -l | tr -d ' '
}
finish() {
	[ "$fails" -eq 0 ] && echo "all passed" && exit 0
	echo "$fails failure(s)"
	exit 1
}
