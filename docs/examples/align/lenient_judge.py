# lenient_judge.py: a lenient judge for docs/align.md; run with
#   PYTHONPATH=path/to/judgekit-checkout python lenient_judge.py
# It fails only answers of fewer than five words. Shown examples of answers people
# failed (judgekit align's few-shot candidate), it also fails answers without a concrete
# step: a number, a 'button', a menu > path or a Ctrl+K shortcut.
import json
import re
import time

from tests.support.openai_server import OpenAIServer, Reply, _verdict_labels


def responder(body):
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    labels = _verdict_labels(body)
    if "pass" not in labels:  # judgekit's capability check ("Is 2 + 2 = 4?")
        verdict = labels[0] if labels else "yes"
        return Reply(json.dumps({"reasoning": "2 + 2 = 4.", "verdict": verdict}))
    response = user.split("Response: ", 1)[1].split("\n\nDoes the response", 1)[0]
    too_short = len(response.split()) < 5
    shown_examples = "Examples judged by people" in system
    vague = shown_examples and not re.search(r"[0-9'>+]", response)
    verdict = "fail" if too_short or vague else "pass"
    reasoning = f"short: {too_short}, vague: {vague}"
    return Reply(json.dumps({"reasoning": reasoning, "verdict": verdict}))


if __name__ == "__main__":
    server = OpenAIServer(responder, model="lenient-judge", port=18092, keep_bodies=False).start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
