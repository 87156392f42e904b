"""Defender's exclusions and Controlled Folder Access read from Get-MpPreference through a recorded PowerShell.

The samples are the script's ``ConvertTo-Json -Compress`` JSON, which it prints as base64 of its UTF-8 (as the
recorded runner does here); the "N/A: Must be an administrator to view exclusions" entry is what recent Windows shows
a non-administrator. No Windows machine was at hand to record them: they are shaped after
Get-MpPreference's documented properties and that published message.
"""

from __future__ import annotations

import base64
import subprocess
from types import SimpleNamespace

from core.util.defender import (
    TIMEOUT_S,
    excluded_by,
    is_under,
    parse_mp_preference,
    powershell_command,
    protected_by,
    read_defender,
)
from tests.windows_recorded import printed


def recorded(name: str, returncode: int = 0, stderr: bytes = b""):
    calls = []

    def run(cmd, **kwargs):
        calls.append((cmd, kwargs))
        return SimpleNamespace(returncode=returncode, stdout=printed(name) if name else b"", stderr=stderr)

    return run, calls


def test_an_administrator_sees_the_exclusions_and_the_protected_folders():
    run, calls = recorded("admin_cfa_on.json")
    facts = read_defender("win32", run)
    assert facts == {"exclusions": ["C:\\Users\\ada\\rlpanel-runs", "D:\\Games\\*"], "cfa_mode": 1,
                     "protected_folders": facts["protected_folders"], "allowed_apps": []}
    assert facts["protected_folders"][0] == "C:\\Users\\ada\\OneDrive\\Documents"  # where .NET says Documents is
    assert facts["protected_folders"][-1] == "D:\\Forschung" and len(facts["protected_folders"]) == 12
    (cmd, kwargs), = calls
    assert cmd[:4] == ["powershell", "-NoProfile", "-NonInteractive", "-EncodedCommand"]
    script = base64.b64decode(cmd[4]).decode("utf-16-le")
    assert "Get-MpPreference" in script and "ConvertTo-Json" in script and "ToBase64String" in script
    assert kwargs["timeout"] == TIMEOUT_S and kwargs["capture_output"]


def test_a_non_administrator_sees_no_exclusions_which_reads_as_unknown():
    facts = read_defender("win32", recorded("non_admin.json")[0])
    assert facts["exclusions"] is None and facts["cfa_mode"] == 0 and facts["allowed_apps"] == []


def test_a_hung_powershell_is_cut_and_a_failed_one_says_why():
    def hangs(cmd, **kwargs):
        raise subprocess.TimeoutExpired(cmd, kwargs["timeout"])

    assert read_defender("win32", hangs) == {"error": "PowerShell's Get-MpPreference did not answer within 8 s"}
    failed, _ = recorded("", 1, b"Get-MpPreference : Operation failed with the following error: 0x800106ba\r\n")
    assert read_defender("win32", failed)["error"].startswith(
        "Get-MpPreference failed (Get-MpPreference : Operation failed with the following error: 0x800106ba)")

    def missing(cmd, **kwargs):
        raise FileNotFoundError(2, "The system cannot find the file specified")

    assert read_defender("win32", missing)["error"].startswith("PowerShell could not be run")
    clixml = ('#< CLIXML\r\n<Objs Version="1.1.0.1" xmlns="http://schemas.microsoft.com/powershell/2004/04">'
              '<S S="Error">Get-MpPreference : Zugriff verweigert_x000D__x000A_</S></Objs>')
    assert read_defender("win32", recorded("", 1, clixml.encode())[0])["error"].startswith(
        "Get-MpPreference failed (Get-MpPreference : Zugriff verweigert)")
    assert read_defender("win32", lambda cmd, **kw: SimpleNamespace(returncode=0, stdout=b"{}\r\n", stderr=b""))[
        "error"].startswith("PowerShell's answer is not the script's")
    assert read_defender("linux", missing) is None


def test_odd_output_is_named_not_guessed():
    assert parse_mp_preference("WARNING: something\r\n")["error"].startswith("Get-MpPreference's output is not JSON")
    assert parse_mp_preference("[1, 2]")["error"].startswith("Get-MpPreference's output is not an object")
    one = parse_mp_preference('{"ExclusionPath":"C:\\\\runs","EnableControlledFolderAccess":null}')  # a lone string
    assert one["exclusions"] == ["C:\\runs"] and one["cfa_mode"] is None and one["protected_folders"] == []


def test_paths_compare_as_windows_compares_them():
    assert is_under("c:/users/ADA/rlpanel-runs/", "C:\\Users\\ada\\rlpanel-runs")
    assert is_under("C:\\Users\\ada\\rlpanel-runs\\cartpole", "C:\\Users\\ada\\rlpanel-runs")
    assert not is_under("C:\\Users\\ada\\rlpanel-runs2", "C:\\Users\\ada\\rlpanel-runs")
    assert not is_under("C:\\Users\\ada", "")
    exclusions = ["D:\\Games\\*", "C:\\Users\\ada\\rlpanel-runs"]
    assert excluded_by("C:\\Users\\ada\\rlpanel-runs", exclusions) == "C:\\Users\\ada\\rlpanel-runs"
    assert excluded_by("D:\\Games\\runs", exclusions) is None  # wildcards are not matched here
    assert protected_by("C:\\Users\\ada\\OneDrive\\Documents\\runs", ["C:\\Users\\ada\\OneDrive\\Documents"])
    assert powershell_command("1")[-1] == base64.b64encode("1".encode("utf-16-le")).decode()
