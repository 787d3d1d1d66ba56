export {
  watchServingCertificate,
  SERVING_CERTIFICATE_DEFAULTS,
  type CertificateEventPublisher,
  type ServingCertificateOptions,
  type ServingCertificateInfo,
  type ServingCertificateWatch,
} from './serving-certificate';
