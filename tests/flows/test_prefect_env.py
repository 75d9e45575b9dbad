"""The one-certificate CA file rotbench gives Prefect's client when its API is plain HTTP."""

from __future__ import annotations

import ssl

import pytest

from flows.prefect_env import _plain_http_ca_bundle


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.delenv("PREFECT_API_SSL_CERT_FILE", raising=False)
    return tmp_path


@pytest.mark.parametrize("url", [None, "http://127.0.0.1:4200/api", "http://farm:4200/api"])
def test_plain_http_gets_one_certificate(home, monkeypatch, url) -> None:
    if url is None:
        monkeypatch.delenv("PREFECT_API_URL", raising=False)
    else:
        monkeypatch.setenv("PREFECT_API_URL", url)
    path = _plain_http_ca_bundle()
    assert path == str(home / "plain-http-ca.pem")
    text = (home / "plain-http-ca.pem").read_text()
    assert text.count("BEGIN CERTIFICATE") == 1 and text.endswith("-----END CERTIFICATE-----\n")
    ssl.create_default_context(cafile=path)  # a CA file Python's ssl accepts


def test_https_and_the_users_own_file_are_left_alone(home, monkeypatch) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "https://prefect.example/api")
    assert _plain_http_ca_bundle() is None
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    monkeypatch.setenv("PREFECT_API_SSL_CERT_FILE", "/etc/ssl/mine.pem")
    assert _plain_http_ca_bundle() is None
    assert not (home / "plain-http-ca.pem").exists()


def test_an_empty_prefect_home_is_unset_for_prefect_too(tmp_path) -> None:
    """``PREFECT_HOME=""``: rotbench read it as unset (the cache folder's home) and Prefect
    as the working folder, where it then wrote its database."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("import os; from flows.prefect_env import configure_prefect_env, prefect_home; "
            "configure_prefect_env('c'); print(os.environ['PREFECT_HOME']); "
            "print(prefect_home('c'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "PREFECT_HOME": "", "PYTHONPATH": str(root)})
    assert done.stdout.splitlines() == [str(tmp_path / "c" / "prefect-home")] * 2, done.stderr
