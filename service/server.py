"""``svcc serve-analysis``: the Falcon application under gunicorn, in-process.

gunicorn's ``BaseApplication`` takes the application object directly, so the workspace and
limits chosen on the command line reach every worker without environment variables.
"""

from typing import Any

from gunicorn.app.base import BaseApplication


class AnalysisServer(BaseApplication):  # type: ignore[misc]
    def __init__(self, application: Any, options: dict[str, Any]) -> None:
        self.application = application
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.application


def serve_analysis(
    *, workspace: str, bind: str, workers: int, max_upload_bytes: int, max_directory_files: int
) -> None:
    from svcc.service.app import create_app

    application = create_app(
        workspace, max_upload_bytes=max_upload_bytes, max_directory_files=max_directory_files
    )
    AnalysisServer(
        application,
        {
            "bind": bind,
            "workers": workers,
            "timeout": 120,
            "accesslog": "-",
            "control_socket_disable": True,
        },
    ).run()
