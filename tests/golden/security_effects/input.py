"""Capabilities that would hand a caller the server: conditional until --allow."""

import os
import pickle
import subprocess
from pathlib import Path


def load_env(key: str) -> str:
    return os.environ[key]  # expect: SVC-R033


def say(phrase: str) -> None:
    subprocess.Popen(f"say {phrase}", shell=True)  # expect: SVC-R034


def restore(blob: str) -> object:
    return pickle.loads(blob.encode())  # expect: SVC-R035


def read_note(name: str) -> str:
    return Path(name).read_text()  # expect: SVC-R036


def safe(name: str) -> str:
    return name.strip()
