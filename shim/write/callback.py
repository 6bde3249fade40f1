"""Hudi's HTTP commit callback: after a commit completes, POST a message naming it to a URL.

The options are Hudi's own (`HoodieWriteCommitCallbackConfig`), so a catalog that takes Hudi's
callback (`hudi-shim serve`'s `POST /v1/commits`) hears of commits by Hudi's writers and this one
alike:

    hoodie.write.commit.callback.on=true
    hoodie.write.commit.callback.http.url=http://127.0.0.1:8080/v1/commits
    hoodie.write.commit.callback.http.custom.headers=Authorization:Bearer <token>   # Name:value;Name:value
    hoodie.write.commit.callback.http.api.key.value=...                              # header HUDI-CALLBACK-KEY
    hoodie.write.commit.callback.http.timeout.seconds=30

As in Hudi, a callback that fails is logged (without its headers) and the commit stands.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field

from shim.errors import InvalidArgumentError, UnsupportedFeatureError
from shim.write.option_values import flag, integer, text

log = logging.getLogger(__name__)

CALLBACK_ON = "hoodie.write.commit.callback.on"
CALLBACK_CLASS = "hoodie.write.commit.callback.class"
CALLBACK_URL = "hoodie.write.commit.callback.http.url"
CALLBACK_API_KEY = "hoodie.write.commit.callback.http.api.key.value"
CALLBACK_HEADERS = "hoodie.write.commit.callback.http.custom.headers"
CALLBACK_TIMEOUT = "hoodie.write.commit.callback.http.timeout.seconds"
HTTP_CALLBACK = "org.apache.hudi.callback.impl.HoodieWriteCommitHttpCallback"
API_KEY_HEADER = "HUDI-CALLBACK-KEY"


@dataclass(frozen=True, slots=True)
class CommitCallback:
    """Where and how a completed commit is announced. Headers may carry credentials: never shown."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout_seconds: float = 30.0

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> CommitCallback | None:
        """The callback `options` ask for (None: `hoodie.write.commit.callback.on` is not true)."""
        if not flag(options, CALLBACK_ON, False):
            return None
        kind = text(options, CALLBACK_CLASS, HTTP_CALLBACK) or HTTP_CALLBACK
        if kind != HTTP_CALLBACK:
            raise UnsupportedFeatureError(f"{CALLBACK_CLASS}={kind} is not supported: this writer sends Hudi's HTTP "
                                          f"callback ({HTTP_CALLBACK})", feature="commit-callback")
        url = text(options, CALLBACK_URL)
        if not url or not url.startswith(("http://", "https://")):
            raise InvalidArgumentError(f"{CALLBACK_ON}=true needs {CALLBACK_URL}, an http:// or https:// URL")
        headers = {API_KEY_HEADER: text(options, CALLBACK_API_KEY) or ""}
        for item in (text(options, CALLBACK_HEADERS) or "").split(";"):
            name, sep, value = item.partition(":")
            if sep and name.strip() and value.strip():
                headers[name.strip()] = value.strip()
            elif item.strip():
                raise InvalidArgumentError(f"{CALLBACK_HEADERS}: each header is Name:value, separated by ';'")
        return cls(url, headers, float(integer(options, CALLBACK_TIMEOUT, 30)))

    def send(self, instant: str, table_name: str, base_path: str) -> bool:
        """Announce the completed commit `instant`; whether the receiver took it (a failure is
        logged, never raised: the commit stands)."""
        body = json.dumps({"commitTime": instant, "tableName": table_name, "basePath": base_path,
                           "hoodieWriteStat": []}).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={**self.headers, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                response.read()
            return True
        except urllib.error.HTTPError as exc:
            log.error("commit %s of %s: the commit callback to %s answered %s", instant, table_name, self.url,
                      exc.code)
        except OSError as exc:
            log.warning("commit %s of %s: the commit callback to %s failed: %s", instant, table_name, self.url, exc)
        return False
