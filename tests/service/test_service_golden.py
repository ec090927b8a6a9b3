"""Golden container files: ``tests/golden_service/<configuration>/`` holds what each generator
writes for ``conf.json`` there. ``pytest --snapshot-update`` rewrites them; review the diff."""

import json
from pathlib import Path

import pytest
from golden_tree import check_tree
from svcc.service import generators
from svcc.service.config import parse_configuration

ROOT = Path(__file__).resolve().parents[1] / "golden_service"
CONFIGURATIONS = {
    "defaults": {},
    "debian_with_dependencies": {
        "python_version": [3, 12],
        "container_image": "debian",
        "container_image_tag": "slim-bookworm",
        "dependencies": [
            {"name": "psycopg2>=2.9", "packages": ["libpq-dev"]},
            {"name": "lxml", "packages": ["libxml2-dev", "libxslt1-dev"]},
        ],
        "custom_packages": ["numpy==2.1.0", "fastapi"],
        "svc_requirements": ["httpx"],
    },
    "alpine_custom_server": {
        "python_version": "3.11",
        "container_image_tag": "alpine3.20",
        "dependencies": [{"name": "pillow", "packages": ["jpeg-dev", "zlib-dev"]}],
        "main_folder": "src",
        "api_filename": "service.py",
        "server": {
            "host": "::",
            "port": 8080,
            "workers": 4,
            "timeout": 120,
            "wsgi_file_name": "entry.py",
            "wsgi_conf_file_name": "gunicorn_settings.py",
        },
    },
}


def generated(conf: dict[str, object]) -> dict[str, bytes]:
    parsed = parse_configuration(conf)
    return {
        **generators.server_files(parsed),
        **generators.requirements_file(parsed),
        **generators.containerfile(parsed),
    }


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_generated_files(name: str, request: pytest.FixtureRequest) -> None:
    folder = ROOT / name
    if request.config.getoption("--snapshot-update"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "conf.json").write_text(json.dumps(CONFIGURATIONS[name], indent=2) + "\n")
    check_tree(folder, generated(CONFIGURATIONS[name]), request, keep=frozenset({"conf.json"}))
    assert json.loads((folder / "conf.json").read_text()) == CONFIGURATIONS[name]


def test_no_stale_configurations() -> None:
    assert {p.name for p in ROOT.iterdir() if p.is_dir()} == set(CONFIGURATIONS)


def test_generated_python_compiles() -> None:
    for conf in CONFIGURATIONS.values():
        for file_name, data in generated(conf).items():
            if file_name.endswith(".py"):
                compile(data, file_name, "exec")
