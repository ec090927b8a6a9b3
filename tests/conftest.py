import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# A runner started in the background of a non-interactive shell (`cmd &`, some CI harnesses)
# inherits SIGINT ignored, and so would every process the tests start: Ctrl-C tests would then
# test nothing. The suite runs with the interactive default, whatever launched it (children
# get SIG_DFL across exec, and Python turns that into KeyboardInterrupt).
signal.signal(signal.SIGINT, signal.default_int_handler)
