"""Cog descriptors and types svcc refuses, each with its reason."""

from cog import File, Input, Path, Secret
from pydantic import Field

LIMIT = 10


def computed(text: str, times: int = Input(default=1, le=LIMIT)) -> str:  # expect: SVC-R055
    return text * times


def misplaced(text: str = Input(ge=0)) -> str:  # expect: SVC-R055
    return text


def not_served(scale: float = Field(default=1.0, multiple_of=0.5)) -> float:  # expect: SVC-R055
    return scale


def upscale(image: Path = Input(description="An image.")) -> str:  # expect: SVC-R011
    return str(image)


def render(text: str) -> Path:  # expect: SVC-R050
    return Path(text)


def upload(document: File = Input()) -> int:  # expect: SVC-R011
    return 0


def sign(token: Secret = Input(description="An API token.")) -> str:  # expect: SVC-R011
    return str(token)
