import { request } from 'node:http';

type HttpMethods = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

export interface HttpResponse {
  data: any;
  headers: Record<string, any>;
  status: number;
}

/** throttler's test/utility/httpromise.ts, typed: one request over a real socket, the JSON body parsed. */
export function httPromise(url: string, method: HttpMethods = 'GET', headers: Record<string, any> = {}, body?: Record<string, any>): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      res.setEncoding('utf-8');
      let data = '';
      res.on('data', (chunk) => {
        data += chunk;
      });
      res.on('end', () => resolve({ data: JSON.parse(data), headers: res.headers, status: res.statusCode! }));
      res.on('error', (err) => reject({ data: err, headers: res.headers, status: res.statusCode }));
    });
    req.on('error', reject);
    req.method = method;
    for (const key of Object.keys(headers)) req.setHeader(key, headers[key]);
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      const payload = Buffer.from(JSON.stringify(body));
      req.setHeader('Content-Type', 'application/json');
      req.setHeader('Content-Length', payload.byteLength);
      req.write(payload);
    }
    req.end();
  });
}
