"""The default hypothesis profile is reproducible: fixed examples, no example database between runs."""
from __future__ import annotations

import os

import pytest
from hypothesis import settings


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci", reason="another profile was asked for")
def test_the_ci_profile_is_loaded_by_default_and_is_derandomized_without_a_database():
    current = settings()
    assert current.derandomize is True and current.database is None and current.print_blob is True
    assert current.deadline is None  # no wall-clock dependence on a shared 2-core machine


def test_the_fuzz_profile_draws_fresh_examples_and_keeps_no_database():
    fuzz = settings.get_profile("fuzz")
    assert fuzz.derandomize is False and fuzz.database is None and fuzz.max_examples >= 100
