# Stand-in for a training script in nvcr.io/nvidia/pytorch (the test
# cluster's image; examples/gpu): no PyTorch, it prints its Flux task, host,
# the GPUs Flux gave it and its arguments, one line per task.
import json
import os
import socket
import sys

print("train", os.environ["FLUX_TASK_RANK"], socket.gethostname(),
      os.environ.get("CUDA_VISIBLE_DEVICES"), json.dumps(sys.argv[1:]))
