# Sourced by the tmux smoke scripts: the repository root as cwd, the Python to run ($PYTHON,
# else the project's .venv, else python3) as $PY, and tmux present.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON
elif [ -x .venv/bin/python ]; then PY=.venv/bin/python
else PY=python3; fi
command -v tmux >/dev/null || { echo "tmux not found (apt-get install tmux)" >&2; exit 2; }
