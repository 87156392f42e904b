"""``rlpanel hub --push REPO_ID``: a written model folder uploaded with huggingface_hub (the ``hub`` extra).

``create_repo(exist_ok=True)`` then ``upload_folder``, as rl_zoo3's ``push_to_hub`` does, with the user's
own token (``hf auth login``, or ``HF_TOKEN``). Whatever stops it (the library missing, no token, no network,
a refused repository) is one ``HubPushError`` line that says the folder is written and how to upload it later.
No torch here: the upload is plain HTTP.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.launch.agent_results import repo_id_problem

PUSH_FIX = "pip install huggingface_hub (rlpanel[hub])"


class HubPushError(ValueError):
    """The push did not happen; the message names why and the folder left for a later upload (a ValueError: the
    tool says it in one line, as any other thing the user can fix)."""


def push_folder(folder: Path, repo_id: str, message: str) -> str:
    """Upload ``folder`` to the model repository ``repo_id`` (made if new); its URL. Raises ``HubPushError``."""
    later = f"the folder {folder} is written: upload it later with: hf upload {repo_id} {folder}"
    problem = repo_id_problem(repo_id)
    if problem:
        raise HubPushError(f"{problem}; {later}")
    try:
        from huggingface_hub import HfApi, get_token
        from huggingface_hub.errors import HfHubHTTPError
    except ImportError:
        raise HubPushError(f"--push needs huggingface_hub, which is not installed in this Python: {PUSH_FIX}; "
                           f"{later}") from None
    token = get_token()
    if not token:
        raise HubPushError(f"--push: no Hugging Face token here: log in with 'hf auth login' (or set HF_TOKEN); {later}")
    api = HfApi(token=token)
    try:
        url = api.create_repo(repo_id, repo_type="model", exist_ok=True)
        api.upload_folder(repo_id=repo_id, folder_path=str(folder), commit_message=message)
    except HfHubHTTPError as exc:  # refused: a token without write access, a name taken by someone else
        raise HubPushError(f"--push {repo_id}: the Hub refused it: {_first_line(exc)}; {later}") from None
    except Exception as exc:  # noqa: BLE001 - no network, the endpoint down: httpx2's errors in huggingface_hub 2.x,
        # httpx's in 1.x, requests' in 0.x (no common base): to the user they are all "the Hub was not reached"
        endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
        raise HubPushError(f"--push {repo_id}: could not reach the Hub at {endpoint} ({type(exc).__name__}: "
                           f"{_first_line(exc)}); {later}") from None
    return str(url)


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
