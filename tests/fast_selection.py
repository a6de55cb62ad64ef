"""A pytest plugin for `make test-fast` (`-p tests.fast_selection`): a test that starts a real
process is `slow`, as pyproject.toml's marker defines it, without each test having to say so. A
new test that starts one is then left out of the quick run by itself."""

import inspect

import pytest

PROCESS_FIXTURES = {"service", "either_service", "worker_host", "folder_service", "fuzz_service", "postgres"}
STARTS_A_PROCESS = ("Service(", "subprocess", "Popen(")  # in the test's own body


def starts_a_process(item) -> bool:
    if PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    try:
        body = inspect.getsource(item.function)
    except (AttributeError, OSError, TypeError):
        return False
    return any(call in body for call in STARTS_A_PROCESS)


def pytest_collection_modifyitems(items):
    for item in items:
        if starts_a_process(item):
            item.add_marker(pytest.mark.slow)
