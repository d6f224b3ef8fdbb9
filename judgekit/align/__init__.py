"""``judgekit align``: candidates judged on dev, the best confirmed once on a locked test split.

- :mod:`judgekit.align.splits`: the train/dev/test split, drawn once, grouped and stratified;
- :mod:`judgekit.align.candidates`: rubric versions (files, few-shot examples, sampling);
- :mod:`judgekit.align.optimizer`: instruction revisions from an optimizer model;
- :mod:`judgekit.align.evaluate`: judging a part through the runner and its statistics;
- :mod:`judgekit.align.run`: the loop; :mod:`judgekit.align.render`: its text.
"""
