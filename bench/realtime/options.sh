# Sourced by compare.sh and scaling.sh: option parsing shared by the harnesses.
# Set SCRIPT (the name errors start with) before sourcing.

# An option's value: present, and for --reps a positive number (one line and exit 2 if not).
# Usage: VAR=$(value "$@") || exit 2
value() {
  [[ $# -ge 2 && -n $2 ]] || { echo "$SCRIPT: $1: needs a value" >&2; exit 2; }
  if [[ $1 == --reps && ! $2 =~ ^[1-9][0-9]*$ ]]; then
    echo "$SCRIPT: --reps: expected a positive whole number, got '$2'" >&2
    exit 2
  fi
  printf '%s' "$2"
}
