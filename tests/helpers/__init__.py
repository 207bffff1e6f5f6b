"""Helpers shared by the test packages (imported as tests.helpers.*; pytest's `pythonpath`
puts the repository root on sys.path, so no test edits sys.path)."""
