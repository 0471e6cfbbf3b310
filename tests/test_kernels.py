"""Every registered kernel, checked on the test cases on every available device; benchmarks with
``--benchmark-only`` (or ``--benchmark``)."""

from suite.pytest_plugin import benchmark_row, outcome, run_item


def test_kernel(request, sb_item):
    outcome(run_item(request.config, sb_item))


def test_bench(request, benchmark, sb_bench_item):
    benchmark_row(request.config, benchmark, sb_bench_item)
