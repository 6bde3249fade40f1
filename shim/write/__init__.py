"""Writing the Hudi layout itself: table creation, base and log files, commits, rollbacks, cleans.

These are the format-level pieces engines build on (the PySpark writer, test fixtures, the demo
and benchmarks); they make no decisions about indexes or file sizing.
"""
