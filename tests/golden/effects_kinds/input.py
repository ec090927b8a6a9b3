"""Each kind of import-time effect keeps its own code."""

import atexit
import logging
import os
import random
import re
import sys
import time

TEXT = open("settings.txt").read()  # expect: SVC-R026
HOME = os.environ["HOME"]  # expect: SVC-R027
ARGS = sys.argv[1:]  # expect: SVC-R027
logging.info("loaded")  # expect: SVC-R028
SEED = random.random()  # expect: SVC-R029
STARTED = time.time()  # expect: SVC-R029
sys.path.insert(0, "vendor")  # expect: SVC-R030
atexit.register(print, "bye")  # expect: SVC-R030
BROKEN = re.compile(r"(unclosed")  # expect: SVC-R031
UNKNOWN = os.urandom(2).hex()  # expect: SVC-R029


def answer() -> int:
    return 42
