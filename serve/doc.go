// Package serve answers a posterior's predictions over HTTP: an
// http.Handler around a predictive.Posterior (ptsghmc serve runs it).
//
//   - POST /v1/predict: a JSON body {"images": [[...], ...]} (each image a
//     flat array of the model's input size of pixel values in [0, 1]) or
//     the bytes of an IDX image file (Content-Type:
//     application/octet-stream; unsigned bytes are scaled by 1/255, floats
//     taken as they are) answers {"predictions": [...], "samples": S,
//     "temperature": T}, one predictive.Prediction per image in order.
//   - GET /v1/model: predictive.Info (architecture, samples, temperature,
//     classes, the abstention threshold and how it was fixed).
//   - GET /healthz: {"status": "ok"} while the server takes requests.
//   - GET /metrics: counters in the Prometheus text format.
//
// Every refusal is a JSON {"error": "..."} with a 4xx status naming what
// was wrong: a malformed body, an empty batch, an image of the wrong
// length or with a value outside [0, 1], a body or a batch over the
// limits (Limits), an unknown path or method. Concurrent requests share
// ensemble passes (predictive.Batcher); a request still waiting for its
// pass near the server's write timeout (Options.WriteTimeout) is answered
// with a JSON 503.
package serve
