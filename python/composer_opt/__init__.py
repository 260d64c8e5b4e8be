"""composer_opt: MosaicML Composer's speedup methods as compiler passes on
TorchScript models, and the runtime that trains them.

    import torchvision, composer_opt
    model = composer_opt.optimize(torchvision.models.resnet18(),
                                  pipeline="composer-mild")
    print(model.composer_report)       # sites changed and skipped, per pass

``composer_opt.functional`` has Composer's functional API by name
(``apply_blurpool``, ...), each returning the new module.

``composer_opt.Trainer`` is Composer's Trainer, run in process by the C++
engine on the user's own DataLoader, with Composer's algorithm classes
(``composer_opt.algorithms``) and Python callbacks and loggers::

    from composer_opt.algorithms import BlurPool, EMA
    trainer = composer_opt.Trainer(model=model, train_dataloader=loader,
                                   max_duration="2ep",
                                   algorithms=[BlurPool(), EMA()])
    trainer.fit()
"""

from ._errors import CompilerError, CompilerWarning, Diagnostic
from ._optimize import (OptionInfo, PassInfo, PassReport, SiteCounts,
                        SiteReport, SkippedSites, optimize, passes,
                        report_costs)
from ._runtime import library_directory, load_runtime
from ._train import TrainingError, TrainResult, train
from . import functional
from ._callbacks import Callback
from ._trainer import Evaluator, Trainer
from . import algorithms

__all__ = [
    "Callback", "CompilerError", "CompilerWarning", "Diagnostic", "Evaluator",
    "OptionInfo", "PassInfo", "PassReport", "SiteCounts", "SiteReport", "SkippedSites",
    "TrainingError", "TrainResult", "functional", "library_directory",
    "load_runtime", "optimize", "passes", "report_costs", "train", "Trainer",
    "algorithms",
]
