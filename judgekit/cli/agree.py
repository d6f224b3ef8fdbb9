"""``judgekit agree FILE`` or ``agree --rubric R``: inter-rater agreement from a plain ratings
file, a labels export, or the labels in the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from judgekit.cli._common import (
    RESAMPLES,
    SEED,
    db_option,
    echo,
    echo_json,
    read_store,
    reference_option,
    resolve_rubric,
    text_or_json_option,
)
from judgekit.cli._progress import progress_bar
from judgekit.errors import InputError
from judgekit.progress import phase

if TYPE_CHECKING:  # these import numpy, scipy or sqlite-utils: not for --help
    from judgekit.compare.agree import AgreeResult, Level
    from judgekit.compare.clustering import Clustering

#: Measurement levels (``judgekit.compare.agree.LEVELS``, named here for a fast ``--help``).
LEVELS = ("nominal", "ordinal", "interval", "ratio")

#: Phases of ``agree`` as the progress bar counts them (reading, then the library's four).
AGREE_STEPS = 5


def render_agree_text(result: AgreeResult) -> str:
    """A readable table: the multi-rater figures, then every rater pair."""
    from judgekit.report._format import stat_text

    lines = [
        f"Agreement ({result.level}): {result.n_ratings} ratings of {result.n_items} items "
        f"by {result.n_raters} raters; 95% intervals",
        f"  {'Krippendorff alpha':<28}{stat_text(result.krippendorff_alpha)}",
        f"  {'Fleiss kappa':<28}{stat_text(result.fleiss_kappa)}",
        f"  {'Percent agreement (pairs)':<28}{stat_text(result.percent_agreement)}",
        "",
        f"Pairwise Cohen's kappa ({result.kappa_weights or 'unweighted'}; pairs sharing at least "
        f"{result.min_overlap} items: {len(result.pairs)}, skipped: {result.pairs_skipped})",
    ]
    if result.clustering is not None:
        lines[1:1] = [f"  Intervals: {result.clustering.method}"]
    lines[1:1] = [f"  Note: {note}" for note in result.notes]
    width = max([12, *(len(p.rater_a) + len(p.rater_b) + 6 for p in result.pairs)])
    for pair in result.pairs:
        name = f"{pair.rater_a} vs {pair.rater_b}"
        lines.append(f"  {name:<{width}}{stat_text(pair.stat)}")
    parity = result.parity
    if parity is not None:
        lines += [
            "",
            f"Judge parity: {result.judge} against the other raters",
            f"  {'Judge - human agreement':<28}{stat_text(parity.gap)}",
        ]
        test = parity.alt_test
        if test is not None:
            for row in test.annotators:
                outcome = "judge wins" if row.judge_wins else "annotator holds"
                lines.append(
                    f"  alt-test vs {row.annotator}: judge advantage {row.judge_advantage:.2f}, "
                    f"annotator {row.annotator_advantage:.2f}, adjusted p "
                    f"{row.adjusted_pvalue:.3g}, n={row.n} ({outcome})"
                )
            if test.skipped:
                lines.append(
                    f"  alt-test skipped (too few shared items): {', '.join(test.skipped)}"
                )
        lines.append(f"  {parity.sentence}")
        ref = result.against_reference
        if ref is not None:
            name = "Cohen's kappa" if ref.statistic_name == "cohen_kappa" else "Spearman"
            lines.append(f"  {name} against {ref.reference} (--reference): {stat_text(ref.stat)}")
    return "\n".join(lines) + "\n"


@click.command("agree")
@click.argument("file", type=click.Path(exists=True, dir_okay=False), required=False)
@click.option("--rubric", default=None,
              help="Read the annotators' labels for this rubric from the store instead of FILE "
              "(blind labels only, as in report).")
@db_option
@click.option("--dataset", default=None, help="With --rubric: only this dataset's items.")
@click.option("--include-unblinded", is_flag=True,
              help="With --rubric: also labels given with the judge's verdict shown.")
@click.option(
    "--level",
    type=click.Choice(LEVELS),
    default=None,
    help="Measurement level (Krippendorff); non-nominal labels must be numbers and "
    "pairwise kappas use quadratic weights. Default: nominal; with --rubric, ordinal "
    "for an ordinal scale.",
)
@text_or_json_option
@click.option(
    "--min-overlap",
    type=int,
    default=5,
    show_default=True,
    help="Only rater pairs sharing at least this many items get a Cohen's kappa.",
)
@click.option("--resamples", type=RESAMPLES, default=1000, show_default=True,
              help="Bootstrap resamples.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--cluster-by",
    default=None,
    metavar="FIELD",
    help="With --rubric: resample clusters of items sharing FIELD (cluster, prompt, slice, "
    "meta.NAME; 'item' for none). Default, as in report: 'cluster' when items have one, "
    "else 'prompt' when items share one.",
)
@click.option(
    "--judge",
    "judge",
    default=None,
    metavar="RATER",
    help="Treat this rater as the candidate to replace the others: adds the judge-human minus "
    "human-human agreement gap and, with 3+ other raters, the alternative annotator test.",
)
@reference_option
@click.option(
    "--epsilon",
    type=click.FloatRange(0.0, 1.0, max_open=True),
    default=0.2,
    show_default=True,
    help="Alternative annotator test cost-benefit margin (0.2 experts, 0.15 skilled, "
    "0.1 crowd workers).",
)
def command(
    file: str | None, rubric: str | None, db: str, dataset: str | None, include_unblinded: bool,
    level: Level | None, fmt: str, min_overlap: int, resamples: int, seed: int,
    cluster_by: str | None, judge: str | None, reference: str | None, epsilon: float,
) -> None:
    """Agreement among raters in FILE (CSV, TSV or JSONL with item_id, rater, label),
    or among the annotators in the store (--rubric, --db).

    FILE may be a `judgekit labels export` file: its annotator column is the
    rater. Prints pairwise Cohen's kappa for every rater pair, Fleiss' kappa,
    Krippendorff's alpha and percent agreement, each with its n and a bootstrap
    interval. With --judge RATER, that rater (e.g. an LLM's labels in the same
    file) is tested as a stand-in for the others.
    """
    from judgekit.compare.agree import agreement_from_ratings, read_ratings
    from judgekit.compare.agree_store import default_level, ratings_from_store, store_clustering

    if (file is None) == (rubric is None):
        raise InputError("give a ratings FILE or --rubric (labels read from the store), not both")
    if cluster_by is not None and rubric is None:
        raise InputError("--cluster-by needs --rubric: a ratings file carries no item fields")
    clusters: dict[str, str] | None = None
    clustering: Clustering | None = None
    notes: tuple[str, ...] = ()
    with progress_bar("agree", AGREE_STEPS):
        phase("reading ratings")
        if rubric is not None:
            with read_store(db) as store:
                from judgekit.report_inputs import require_dataset

                require_dataset(store, dataset)
                loaded = resolve_rubric(store, rubric)
                level = level or default_level(loaded)
                ratings = ratings_from_store(store, loaded, level, dataset=dataset,
                                             include_unblinded=include_unblinded)
                clusters, clustering, notes = store_clustering(store, ratings, cluster_by,
                                                               resamples)
        else:
            assert file is not None
            level = level or "nominal"
            ratings = read_ratings(file, level)
        result = agreement_from_ratings(
            ratings,
            level,
            min_overlap=min_overlap,
            n_resamples=resamples,
            random_state=seed,
            judge=judge,
            epsilon=epsilon,
            clusters=clusters,
            clustering=clustering,
            notes=notes,
            reference=reference,
        )
    if fmt == "json":
        echo_json(result.to_dict(), indent=2, allow_nan=False)
    else:
        echo(render_agree_text(result), nl=False)
