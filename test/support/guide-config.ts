/**
 * The service block of the systemd guide's configuration (systemd/README.md, step 5): the client
 * secret and API key as systemd credentials, the TLS files in the credentials folder unless
 * `tls` names other paths. Followed by `stateDir: ./state`.
 */
export function guideServiceBlock(tls?: { caFile: string; certFile: string; keyFile: string }): string {
  const files = tls ?? {
    caFile: `\${env:CREDENTIALS_DIRECTORY}/ca.pem`,
    certFile: `\${env:CREDENTIALS_DIRECTORY}/client.pem`,
    keyFile: `\${env:CREDENTIALS_DIRECTORY}/client.key`,
  };
  return `service:
  apiUrl: https://api.example.test/v1
  authUrl: https://auth.example.test
  clientId: agent-client
  clientSecret: \${credential:client-secret}
  apiKey: \${credential:api-key}
  tls:
    caFile: ${files.caFile}
    certFile: ${files.certFile}
    keyFile: ${files.keyFile}
stateDir: ./state
`;
}
