"""One module per service; every call traced with osprofiler."""

from osprofiler import profiler


def trace(func):
    """``osprofiler`` trace under the function's dotted name (no arguments:
    they may carry tokens)."""
    name = '%s.%s' % (func.__module__.rsplit('.', 1)[-1], func.__name__)
    return profiler.trace(name, hide_args=True)(func)
