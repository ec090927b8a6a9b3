"""Cog's parameter descriptors: bounds, choices, patterns and defaults as schema keywords."""

from typing import Annotated

from cog import Input
from pydantic import Field


def generate(
    prompt: str = Input(description="What to write about.", min_length=1, max_length=200),
    temperature: float = Input(default=0.75, ge=0.0, le=1.0, description="Sampling heat."),
    style: str = Input(default="plain", choices=["plain", "poem", "list"]),
    language: str = Input(default="en", regex="^[a-z]{2}$"),
    steps: Annotated[int, Field(gt=0, lt=100)] = 10,
    seed: int | None = Field(default=None, ge=0),
) -> str:
    """Write a short text."""
    return f"{style}:{language}:{prompt}:{temperature}:{steps}:{seed}"
