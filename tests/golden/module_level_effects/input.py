import json
import logging

print("loading")  # expect: SVC-R028
logger = logging.getLogger(__name__)
CONFIG = json.loads('{"a": 1}')

with open(__file__) as fh:  # expect: SVC-R007
    SOURCE = fh.read()

counter = 0
counter += 1
settings = {}
settings["debug"] = True  # a known dict filled with a known value: evaluated


def handler(x: int, default: dict = dict()) -> int:
    return x
