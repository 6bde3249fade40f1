"""A real browser for the UI's tests: Debian's Chromium, headless, driven by Selenium through
Debian's chromedriver (no tool downloads a browser or a driver of its own).

`chromium_paths()` installs the two packages with apt-get when they are missing (CI runs as root,
as it installs docker.io), and skips the test, saying why, only where apt cannot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1440,1000")
_APT_LOG = Path(tempfile.gettempdir()) / "hudi-shim-chromium-apt.log"


def chromium_paths() -> tuple[str, str]:
    """Chromium and chromedriver from Debian, installed now if missing; else the test skips."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            pytest.skip("the browser tests need Debian's chromium and chromium-driver packages, and apt-get "
                        "(as root) is not available to install them")
        command = ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"]
        with open(_APT_LOG, "ab") as log:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            if subprocess.run(command, stdout=log, stderr=log, env=env, check=False).returncode != 0:
                subprocess.run(["apt-get", "update", "-q"], stdout=log, stderr=log, env=env, check=False)
                subprocess.run(command, stdout=log, stderr=log, env=env, check=False)
        if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
            pytest.skip(f"apt-get could not install chromium and chromium-driver (see {_APT_LOG})")
    return CHROMIUM, CHROMEDRIVER


@contextmanager
def browser(download_dir: Path | None = None) -> Iterator[Any]:
    """A headless Chromium session with a new, empty profile (quit and removed afterwards)."""
    chromium, chromedriver = chromium_paths()
    # Selenium Manager must not look for (or fetch) browsers and drivers: both are given.
    os.environ.setdefault("SE_OFFLINE", "true")
    os.environ.setdefault("SE_AVOID_STATS", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="hudi-shim-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(condition: Callable[[], Any], timeout: float = 20.0, what: str = "the page") -> Any:
    """The first truthy value of `condition()`, polled until `timeout` seconds pass."""
    from selenium.common.exceptions import WebDriverException

    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
        except (WebDriverException, IndexError) as exc:  # elements replaced while the page draws: try again
            last_error = exc
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last_error})" if last_error else ""))


def screenshot_dir(fallback: Path) -> Path:
    """Where tests put their screenshots: $HUDI_SHIM_SCREENSHOTS, else `fallback` (a tmp folder)."""
    folder = Path(os.environ.get("HUDI_SHIM_SCREENSHOTS") or fallback)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
