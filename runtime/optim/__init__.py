"""runtime.optim: SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad, Adadelta, ASGD,
Rprop, LBFGS and the lr schedulers (`lr_scheduler`), as in torch.optim."""

from __future__ import annotations

from typing import Any

from runtime.aliases import missing_attribute
from runtime.optim import lr_scheduler, swa_utils
from runtime.optim.adadelta import Adadelta
from runtime.optim.adafactor import Adafactor
from runtime.optim.adagrad import Adagrad
from runtime.optim.adam import Adam
from runtime.optim.adamax import Adamax
from runtime.optim.adamw import AdamW
from runtime.optim.asgd import ASGD
from runtime.optim.lbfgs import LBFGS
from runtime.optim.nadam import NAdam
from runtime.optim.optimizer import Optimizer
from runtime.optim.radam import RAdam
from runtime.optim.rmsprop import RMSprop
from runtime.optim.rprop import Rprop
from runtime.optim.sgd import SGD

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam",
           "Optimizer",
           "RAdam", "RMSprop", "Rprop", "SGD", "lr_scheduler", "swa_utils"]


# -- issue 28, helper funcs -------------------------------------------------------------------
from runtime.optim.muon import Muon  # noqa: E402
from runtime.optim.sparse_adam import SparseAdam  # noqa: E402
from runtime.optim.stateless import swap_in_optimizer_params_and_state  # noqa: E402

__all__ += ["Muon", "SparseAdam", "swap_in_optimizer_params_and_state"]
# -- end of funcs' block ----------------------------------------------------------------------


def __getattr__(name: str) -> Any:
    raise missing_attribute(__name__, name)
