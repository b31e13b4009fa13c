"""Train and evaluate a baseline on an hf_recogs dataset.

    accelerate launch train.py configs/smoke.yaml                      # one process (CPU or one GPU)
    accelerate launch train.py configs/recogs_pos_transformer.yaml learning_rate=3e-4 seeds=[42,66]
    accelerate launch --multi_gpu --num_processes 2 train.py configs/smoke.yaml   # DDP (also on CPU: gloo)
    python train.py --help                                             # every option

The stages live in hf_recogs/train/ (run.py reads top to bottom).
"""

import sys

from hf_recogs.train import main

if __name__ == "__main__":
    sys.exit(main())
