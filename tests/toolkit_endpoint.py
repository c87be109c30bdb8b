"""An endpoint driven by the real inference toolkits, as the MXNet 1.9 inference container runs it.

The container starts MMS with sagemaker_mxnet_serving_container's ``HandlerService``
(sagemaker-mxnet-inference 1.5), whose transformer comes from sagemaker-inference 1.10. MMS's own
model loader (multi-model-server 1.1) builds that service and calls ``initialize``; each request is
a batch of one, with the headers and raw body bytes (the toolkit configures MMS with
``decode_input_request=false``) given to ``handle``, which reports the status and content type
through the MMS context. Only the Java frontend and the sockets are left out.

The user module is the one the toolkit picks: ``SAGEMAKER_PROGRAM`` or, when it is unset,
``inference``, imported from ``<model_dir>/code`` (on ``PYTHONPATH``).

Run as a script (``python toolkit_endpoint.py MODEL_DIR < requests.json``) it serves a
``model.tar.gz`` extracted to MODEL_DIR in a fresh process and prints one JSON object: the answers,
how many times the bundle was loaded, and which top-level modules the served code imports.
"""
import base64
import json
import os
import sys

HANDLER = "sagemaker_mxnet_serving_container.handler_service"


class Endpoint:
    def __init__(self, model_dir):
        os.environ["MMS_DECODE_INPUT_REQUEST"] = "false"  # what the frontend passes on from the toolkit's config
        from mms.model_loader import ModelLoaderFactory

        loader = ModelLoaderFactory.get_model_loader(model_dir)
        self.service = loader.load("model", model_dir, HANDLER, None, 1)  # MMS logs (and swallows) start-up errors

    def invoke(self, body, content_type=None, accept=None):
        """One InvokeEndpoint request -> (status, content type, body text)."""
        from mms.service import Service

        headers = [{"name": name.encode(), "value": value.encode()}
                   for name, value in (("Content-Type", content_type), ("Accept", accept)) if value is not None]
        batch = [{"requestId": b"r-1", "headers": headers,
                  "parameters": [{"name": "body", "contentType": content_type or "", "value": body}]}]
        request_processors, inputs, ids = Service.retrieve_data_for_inference(batch)
        context = self.service.context
        context.request_ids, context.request_processor = ids, request_processors
        try:
            answers = self.service._entry_point(inputs, context)  # HandlerService.handle
        except Exception:  # what MMS's Service.predict answers when handle itself fails
            return 503, None, "Prediction failed"
        status, self.phrase = context.get_response_status(0)  # (the phrase: the HTTP status line's reason)
        answer = answers[0]
        if isinstance(answer, (bytes, bytearray)):
            answer = answer.decode("utf-8")
        return status, context.get_response_content_type(0), answer


def record_imports(packages, found):
    """Add to ``found`` every top-level module that code in ``packages`` imports (function-level too)."""
    import builtins

    real_import = builtins.__import__

    def recording_import(name, globals=None, locals=None, fromlist=(), level=0):
        importer = (globals or {}).get("__name__", "")
        if level == 0 and importer.split(".")[0] in packages:
            found.add(name.split(".")[0])
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = recording_import


def main(model_dir):
    user_module = os.environ.get("SAGEMAKER_PROGRAM", "inference.py")[:-len(".py")]
    imported = set()
    record_imports({"fasttext_lib", user_module}, imported)
    from fasttext_lib import predict

    loads = []
    load = predict.Predictor.load.__func__

    def counting_load(cls, *args, **kwargs):
        loads.append(1)
        return load(cls, *args, **kwargs)

    predict.Predictor.load = classmethod(counting_load)
    endpoint = Endpoint(model_dir)
    answers = []
    for request in json.load(sys.stdin):
        body = base64.b64decode(request["body"])
        status, content_type, text = endpoint.invoke(body, request.get("content_type"), request.get("accept"))
        answers.append({"status": status, "content_type": content_type, "body": text})
    print(json.dumps({"answers": answers, "loads": len(loads), "imported": sorted(imported),
                      "fasttext_lib": os.path.dirname(os.path.abspath(predict.__file__))}))


if __name__ == "__main__":
    main(sys.argv[1])
