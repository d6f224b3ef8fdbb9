#!/usr/bin/env bash
# gate.sh: gate a grading pipeline on the calibration verdict of one judge run.
judgekit report --rubric resolves --dataset support-bot --judge-run "$JUDGE_RUN" \
    --min-agreement 0.6 --format json --out calibration.json
case $? in
  0) echo "judge calibrated (PASS): grading can run" ;;
  1) echo "judge FAILED calibration: fix the rubric or change the judge"; exit 1 ;;
  3) echo "not enough human labels yet: label more, then rerun"; exit 1 ;;
  *) echo "calibration report could not be made"; exit 2 ;;
esac
