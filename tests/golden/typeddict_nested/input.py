from typing import NotRequired, Required, TypedDict

from typing_extensions import TypedDict as TD  # expect: SVC-R008


class Address(TypedDict, total=False):
    street: Required[str]
    city: str


class Person(TypedDict):
    name: str
    age: NotRequired[int]
    address: Address


class Employee(Person):
    employer: str


Movie = TD("Movie", {"title": str, "year": int}, total=False)


def hire(e: Employee) -> str:
    return e["name"]


def watch(m: Movie, people: dict[str, Person] | None = None) -> str:
    return m.get("title", "")
