export {
  watchServingCertificate,
  SERVING_CERTIFICATE_DEFAULTS,
  type ServingCertificateOptions,
  type ServingCertificateInfo,
  type ServingCertificateWatch,
} from './serving-certificate';
