import functools

from flask import Flask  # expect: SVC-R008

app = Flask(__name__)  # expect: SVC-R007


@functools.cache  # expect: SVC-R032
def cached(n: int) -> int:
    return n


@app.route("/hello")  # expect: SVC-R001 SVC-R007
def hello() -> str:
    return "hi"


def plain(x: int) -> int:
    return x
